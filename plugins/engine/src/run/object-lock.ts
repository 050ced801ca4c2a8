import type { RunPlanDestination } from '@holdfast/kernel';
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
