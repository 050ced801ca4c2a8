import type { BlobClient, BlobImmutabilityPolicyMode, ContainerClient } from '@azure/storage-blob';
import { AdapterError, objectLockRetainUntil } from '@holdfast/sdk';
import type { AzureBlobStorageConfig } from '../config.js';
import { AZURE_ORIGIN, serviceCode } from './errors.js';

/** Error codes Azure answers (409) when a blob under version-level immutability may not be deleted or overwritten. */
export const IMMUTABLE_ERROR_CODES = ['BlobImmutableDueToPolicy', 'BlobImmutableDueToLegalHold'] as const;

/**
 * Holdfast's mode names (shared with the S3 destination) in Azure's terms: GOVERNANCE is an "Unlocked" policy, which
 * an identity allowed to manage immutability policies can still shorten or delete; COMPLIANCE is a "Locked" policy,
 * which nobody can shorten or delete, only extend.
 */
export function azureModeOf(mode: AzureBlobStorageConfig['objectLockMode']): BlobImmutabilityPolicyMode {
  return mode === 'COMPLIANCE' ? 'Locked' : 'Unlocked';
}

/** The immutability policy a new backup blob gets. */
export interface BlobPolicy {
  mode: BlobImmutabilityPolicyMode;
  retainUntil: Date;
}

/**
 * The policy of a new backup, or undefined when the destination does not use immutability. `policyEnd` is the
 * earliest moment the job's retention policy may delete the backup (from the engine), plus the margin; without it the
 * configured period applies. A date not in the future is refused (CONFIG) before anything is written.
 */
export function policyFor(config: AzureBlobStorageConfig, policyEnd: Date | undefined, now = new Date()): BlobPolicy | undefined {
  if (!config.objectLockMode) return undefined;
  const retainUntil = objectLockRetainUntil(policyEnd, config, now);
  if (Number.isNaN(retainUntil.getTime()) || retainUntil.getTime() <= now.getTime()) {
    throw new AdapterError(AZURE_ORIGIN, 'CONFIG', `the retain-until date ${Number.isNaN(retainUntil.getTime()) ? 'given' : retainUntil.toISOString()} is not in the future; nothing was stored`);
  }
  return { mode: azureModeOf(config.objectLockMode), retainUntil };
}

/** Whether the error is Azure refusing a delete or overwrite because of an immutability policy or a legal hold. */
export function isImmutableRefusal(error: unknown): boolean {
  return (IMMUTABLE_ERROR_CODES as readonly string[]).includes(serviceCode(error) ?? '');
}

/** The immutability of one blob as Azure reports it (Get Blob Properties). */
export interface BlobLock {
  retainUntil?: Date;
  mode?: string;
  legalHold: boolean;
}

export async function lockOf(blob: BlobClient): Promise<BlobLock> {
  const properties = await blob.getProperties();
  return { retainUntil: properties.immutabilityPolicyExpiresOn, mode: properties.immutabilityPolicyMode, legalHold: properties.legalHold === true };
}

/** The LOCKED error of a blob Azure will not delete yet: names the date (or the legal hold). */
export function lockedError(key: string, lock: BlobLock | undefined): AdapterError {
  const reasons: string[] = [];
  if (lock?.retainUntil && lock.retainUntil.getTime() > Date.now()) reasons.push(`locked until ${lock.retainUntil.toISOString()} (Azure immutability policy, ${lock.mode ?? 'unknown'} mode)`);
  if (lock?.legalHold) reasons.push('under a legal hold (unlock the backup to remove it)');
  const why = reasons.length > 0 ? reasons.join(' and ') : 'protected by an Azure immutability policy or legal hold';
  return new AdapterError(AZURE_ORIGIN, 'LOCKED', `"${key}" is ${why}; the container refuses to delete it before then`);
}

/** What the container says about version-level immutability (Get Container Properties). */
export type ContainerImmutability = { enabled: boolean } | { enabled: 'unknown'; reason: string };

/**
 * Reads `x-ms-immutable-storage-with-versioning-enabled` from the container's properties. Azure sends it as "true"
 * on containers with version-level immutability support; a missing header means the support is off.
 */
export async function containerImmutability(container: ContainerClient, signal?: AbortSignal): Promise<boolean> {
  const properties = await container.getProperties({ abortSignal: signal });
  return properties.isImmutableStorageWithVersioningEnabled === true;
}

/** One sentence for the connection test. */
export function describeImmutability(state: ContainerImmutability): string {
  if (state.enabled === 'unknown') return `Version-level immutability: unknown (${state.reason})`;
  return `Version-level immutability: ${state.enabled ? 'enabled' : 'not enabled'} on the container`;
}
