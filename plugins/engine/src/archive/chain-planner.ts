import { randomUUID } from 'node:crypto';
import type { ChainInfo, Snapshot } from '@holdfast/archive';
import type { StorageInstance } from '../run/adapters.js';
import { mapLimit, PARALLEL_METADATA_READS } from '../run/retention.js';
import { isSidecarKey, readSidecar, SIDECAR_EXTENSION, type ReadSidecar } from '../run/sidecar.js';
import { archiveInfoOf, type ArchiveSidecarInfo } from './archive-sidecar.js';
import { INDEX_SIDECAR_EXTENSION } from './index-sidecar.js';
import { loadSnapshot } from './snapshot-loader.js';

/** The job's chain limits (null: no limit of that kind; both null: every run is a standalone full archive). */
export interface ChainSettings {
  fullEveryRuns: number | null;
  fullEveryDays: number | null;
}

/** What the next run writes: a standalone archive, a chain's full backup (with why), or the next incremental. */
export interface ChainDecision {
  chain: ChainInfo | null;
  previous?: Snapshot;
  chainStartedAt?: string;
  /** For the run log: why this run is a full backup, or which chain it extends. */
  reason: string;
}

interface StoredBackup {
  key: string;
  sidecar: ReadSidecar;
  archive: ArchiveSidecarInfo;
}

/**
 * Decides whether the next run of a job extends its newest chain or starts a new one. A new full backup is forced
 * when the chain reached `fullEveryRuns` or `fullEveryDays`, and whenever any backup the next one would depend on is
 * missing on a destination, failed its post-upload verification, or does not resolve (docs/engine.md "Chains").
 */
export async function planChain(
  settings: ChainSettings,
  storages: StorageInstance[],
  options: { jobId: string; now: Date; encryptionKey: Buffer | null; signal?: AbortSignal },
): Promise<ChainDecision> {
  if (settings.fullEveryRuns === null && settings.fullEveryDays === null) return { chain: null, reason: 'standalone archive (the job keeps no incremental chain)' };
  const full = (reason: string): ChainDecision => ({ chain: { id: randomUUID(), sequence: 0, baseArchives: [] }, chainStartedAt: options.now.toISOString(), reason: `full backup: ${reason}` });
  const primary = storages[0]!;
  const newest = await newestChained(primary, options.jobId, options.signal);
  if (!newest?.archive.chain) return full('no earlier backup of this job in a chain');
  const chain = newest.archive.chain;
  const runs = chain.sequence + 1;
  if (settings.fullEveryRuns !== null && runs >= settings.fullEveryRuns) return full(`chain ${chain.id} already has ${runs} of ${settings.fullEveryRuns} runs`);
  const startedAt = new Date(newest.archive.chainStartedAt ?? newest.sidecar.createdAt);
  const ageDays = (options.now.getTime() - startedAt.getTime()) / 86_400_000;
  if (settings.fullEveryDays !== null && ageDays >= settings.fullEveryDays) {
    return full(`chain ${chain.id} started ${ageDays.toFixed(1)} days ago (a new full every ${settings.fullEveryDays} days)`);
  }
  const members = [...chain.baseArchives, newest.key];
  const problem = await missingMember(storages, members, options.jobId, options.signal);
  if (problem) return full(problem);
  try {
    const { snapshot } = await loadSnapshot(primary, newest.key, options.encryptionKey, options.signal);
    return {
      chain: { id: chain.id, sequence: chain.sequence + 1, baseArchives: members },
      previous: snapshot,
      chainStartedAt: startedAt.toISOString(),
      reason: `incremental run ${chain.sequence + 1} of chain ${chain.id}, after ${newest.key}`,
    };
  } catch (error) {
    return full(`chain ${chain.id} does not resolve: ${(error as Error).message}`);
  }
}

/** The job's newest seekable backup on a destination that belongs to a chain, by recorded creation time. */
async function newestChained(storage: StorageInstance, jobId: string, signal?: AbortSignal): Promise<StoredBackup | undefined> {
  const keys = new Set<string>();
  for await (const object of storage.adapter.list('', { signal })) keys.add(object.key);
  const candidates = [...keys].filter((key) => !isSidecarKey(key) && keys.has(`${key}${SIDECAR_EXTENSION}`) && keys.has(`${key}${INDEX_SIDECAR_EXTENSION}`));
  const limit = storage.capabilities.parallelMetadataReads ? PARALLEL_METADATA_READS : 1;
  const read = await mapLimit(candidates, limit, async (key) => ({ key, sidecar: await readSidecar(storage.adapter, key, signal).catch(() => null) }));
  let newest: StoredBackup | undefined;
  for (const { key, sidecar } of read) {
    const archive = archiveInfoOf(sidecar);
    if (!sidecar || sidecar.jobId !== jobId || !archive?.chain) continue;
    if (!newest || sidecar.createdAt > newest.sidecar.createdAt) newest = { key, sidecar, archive };
  }
  return newest;
}

/** Why the chain cannot be extended on some destination (a member gone or unverified), or undefined when it can. */
async function missingMember(storages: StorageInstance[], members: string[], jobId: string, signal?: AbortSignal): Promise<string | undefined> {
  for (const storage of storages) {
    for (const member of members) {
      const sidecar = await readSidecar(storage.adapter, member, signal).catch(() => null);
      const exists = sidecar ? await storage.adapter.stat(member).then(() => true, () => false) : false;
      if (!sidecar || !exists || sidecar.jobId !== jobId) return `${member}, which the chain depends on, is missing on ${storage.name}`;
      const verification = (sidecar as { verification?: { status?: string } }).verification;
      if (verification?.status === 'mismatch') return `${member}, which the chain depends on, failed verification on ${storage.name}`;
    }
  }
  return undefined;
}
