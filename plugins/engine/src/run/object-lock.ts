import { objectLockRetainUntil, type RunPlanDestination } from '@holdfast/kernel';
import type { AdapterFactory } from './adapters.js';

/**
 * The retain-until date a destination's object lock gets for a backup created at `createdAt`: the first moment the
 * destination's retention policy may prune it (the adapter adds its margin). `undefined` when the policy has no date
 * (count-based, keep-all, none): an object-locked destination then uses its own configured period, and every other
 * destination ignores the option. A policy that cannot be built gives `undefined` too: retention reports it later.
 */
export function retainUntilOf(adapters: Pick<AdapterFactory, 'retention'>, destination: RunPlanDestination, createdAt: Date): Date | undefined {
  if (!destination.retention) return undefined;
  try {
    const strategy = adapters.retention(destination.retention.strategyId, destination.retention.config);
    return strategy.earliestPruneAt?.(createdAt) ?? undefined;
  } catch {
    return undefined;
  }
}

/** A destination's object lock settings (S3 and Azure Blob use the same config fields). */
export interface ObjectLockSettings {
  mode: string;
  /** Days a backup stays locked when its policy gives no date. */
  days: number;
  /** Days added to the policy's date. */
  marginDays: number;
}

/** The destination's object lock settings, or undefined when it has none (no `objectLockMode`, or another store). */
export function objectLockOf(adapters: Pick<AdapterFactory, 'storageConfig'>, destination: RunPlanDestination): ObjectLockSettings | undefined {
  const config = adapters.storageConfig(destination);
  const mode = config?.objectLockMode;
  if (typeof mode !== 'string' || mode === '') return undefined;
  const days = Number(config?.objectLockDays);
  const marginDays = Number(config?.objectLockMarginDays);
  if (!Number.isFinite(days) || !Number.isFinite(marginDays)) return undefined;
  return { mode, days, marginDays };
}

/**
 * The retain-until date the store gave (or gives) a backup created at `createdAt` on an object-locked destination:
 * the engine's `retainUntilOf` through the kernel's `objectLockRetainUntil`, the rule the S3 and Azure adapters apply
 * to `PutOptions.objectLock` (margin added, or `days` after the upload when the policy has no date). Without a policy date
 * the adapters count from the moment the upload starts; the creation time stands in for it here, so the store's date
 * is later by those seconds.
 */
export function lockedUntilOf(adapters: Pick<AdapterFactory, 'retention'>, destination: RunPlanDestination, lock: ObjectLockSettings, createdAt: Date): Date {
  return objectLockRetainUntil(retainUntilOf(adapters, destination, createdAt), { objectLockDays: lock.days, objectLockMarginDays: lock.marginDays }, createdAt);
}
