import { isSidecarKey, SIDECAR_EXTENSION, type ResolvedAdapterConfig } from '@holdfast/kernel';
import { disposeAll, type StorageInstance } from '../run/adapters.js';
import { cancellationOf, messageOf, type RunOutcome } from '../run/outcome.js';
import type { RunContext } from '../run/run-context.js';
import { isAgeEncryption } from '../codec/age/index.js';
import type { RunServices } from '../run/services.js';
import { readSidecar, type ReadSidecar } from '../run/sidecar.js';
import type { ExecutionStore } from '../store/execution-store.js';
import type { IntegrityMetadata } from '../store/metadata.js';
import { recentFinished } from '../store/verification-queries.js';
import { integrityScope, type IntegrityRequest, type VerificationRequest } from './integrity-request.js';
import { checkStoredObject } from './stored-object.js';

/** One backup to check: where it is and what its sidecar says (null when the sidecar could not be read). */
interface WorkItem {
  storage: StorageInstance;
  key: string;
  hasObject: boolean;
  sidecar: ReadSidecar | null;
  sidecarError?: string;
}

type Problem = IntegrityMetadata['problems'][number];

const CURSOR_SEPARATOR = '\u0000';
/** Problems kept in `metadata.integrity.problems` (all are logged and counted). */
const MAX_RECORDED_PROBLEMS = 500;

/**
 * Runs an `IntegrityCheck` (every backup of a job, a destination or everything) or a `Verification` (one backup):
 * each backup is read back and hashed against its sidecar, encrypted ones have every chunk authenticated, and a
 * sidecar whose file is gone counts as a missing object. Problems make the run Partial and are listed in the log
 * and in `metadata.integrity`; the engine raises `integrity_check_failed` from there.
 */
export async function runIntegrity(ctx: RunContext, services: RunServices, store: ExecutionStore): Promise<RunOutcome> {
  const isVerification = ctx.execution.type === 'Verification';
  const request = JSON.parse(ctx.execution.request ?? '{}') as IntegrityRequest & Partial<VerificationRequest>;
  const scope = isVerification ? `file:${request.storageId}:${request.file}` : integrityScope(request);
  const record: IntegrityMetadata = { scope, checked: 0, bytes: 0, byteBudget: isVerification ? null : (request.byteBudget ?? null), problems: [], problemCount: 0, complete: false };
  ctx.metadata.integrity = record;
  const storages: StorageInstance[] = [];
  const problem = (entry: Problem) => {
    record.problemCount = (record.problemCount ?? 0) + 1;
    // The log has every problem; the metadata keeps the first ones so the row stays small on a large installation.
    if (record.problems.length < MAX_RECORDED_PROBLEMS) record.problems.push(entry);
    ctx.log.error(`${entry.file} on ${entry.destination}: ${entry.problem}`);
  };
  try {
    await ctx.enter('01-initialize', 0);
    for (const config of await destinationsOf(services, request, isVerification)) storages.push(services.adapters.storage(config));
    ctx.log.info(`${isVerification ? 'verification' : 'integrity check'} of ${scope} on ${storages.map((s) => s.name).join(', ') || 'no destination'}`);
    let items: WorkItem[];
    if (isVerification) {
      const storage = storages[0]!;
      items = [await verificationItem(storage, request.file!, ctx.signal)];
    } else {
      items = [];
      for (const storage of storages) {
        try {
          items.push(...(await listBackups(storage, request.jobId, ctx.signal)));
        } catch (error) {
          if (cancellationOf(ctx.signal)) throw error;
          problem({ file: '*', destinationId: storage.configId, destination: storage.name, problem: `could not be listed: ${messageOf(error)}` });
        }
      }
    }
    const ordered = isVerification ? items : await orderForBudget(store, scope, record.byteBudget ?? null, items);
    await ctx.enter('02-verify', 5);
    const keys = new Map<string, Buffer | null>();
    let index = 0;
    for (; index < ordered.length; index++) {
      if (record.byteBudget && record.bytes >= record.byteBudget) break;
      const item = ordered[index]!;
      const where = { file: item.key, destinationId: item.storage.configId, destination: item.storage.name };
      record.checked += 1;
      if (!item.sidecar) {
        problem({ ...where, problem: item.sidecarError ?? 'no .meta.json sidecar: nothing to verify against' });
        continue;
      }
      if (!item.hasObject) {
        problem({ ...where, problem: 'missing: the sidecar exists but the backup file is not on the destination' });
        continue;
      }
      const encryptionKey = await keyFor(services, keys, item.sidecar, (message) => ctx.log.warn(`${item.key}: ${message}`));
      const start = record.bytes;
      const check = await checkStoredObject(item.storage, item.key, {
        expectedSha256: item.sidecar.sha256,
        encryptionKey,
        signal: ctx.signal,
        onBytes: (bytes) => ctx.progress(5 + (90 * (index + 1)) / Math.max(1, ordered.length), { bytesProcessed: start + bytes }),
      });
      record.bytes += check.bytesRead;
      if (check.ok) ctx.log.info(`${item.key} on ${item.storage.name}: ok (sha256${encryptionKey ? ', every chunk authenticated' : ''})`);
      else problem({ ...where, problem: check.problem ?? 'failed' });
    }
    record.complete = index >= ordered.length;
    const last = ordered[index - 1];
    record.cursor = record.byteBudget && !record.complete && last ? `${last.storage.configId}${CURSOR_SEPARATOR}${last.key}` : null;
    await ctx.enter('03-completion', 95);
    const summary = `${record.checked} backup(s) checked, ${record.bytes} bytes read, ${record.problemCount ?? 0} problem(s)${record.complete ? '' : ' (byte budget reached; the next run continues)'}`;
    if ((record.problemCount ?? 0) > 0) ctx.log.error(summary);
    else ctx.log.info(summary);
    ctx.progress(100, {}, true);
    return { status: (record.problemCount ?? 0) > 0 ? 'Partial' : 'Success', size: record.bytes, path: isVerification ? (request.file ?? null) : null };
  } catch (error) {
    const cancelled = cancellationOf(ctx.signal);
    if (cancelled) ctx.log.warn(`cancelled: ${cancelled.message}`);
    else ctx.log.error(`${ctx.log.stage} failed: ${messageOf(error)}`);
    return { status: cancelled ? 'Cancelled' : 'Failed' };
  } finally {
    await disposeAll(storages.map((s) => s.adapter));
  }
}

async function destinationsOf(services: RunServices, request: IntegrityRequest & Partial<VerificationRequest>, isVerification: boolean): Promise<ResolvedAdapterConfig[]> {
  if (isVerification || request.storageId) return [await services.catalog.resolveAdapterConfig(request.storageId!)];
  if (request.jobId) return (await services.catalog.resolveRunPlan(request.jobId)).destinations;
  const all = await services.catalog.listStorageDestinations();
  return Promise.all(all.map((destination) => services.catalog.resolveAdapterConfig(destination.configId)));
}

/** Every backup on one destination (of one job, when given): files with their sidecars, and sidecars whose file is gone. */
async function listBackups(storage: StorageInstance, jobId: string | undefined, signal: AbortSignal): Promise<WorkItem[]> {
  const objects = new Set<string>();
  const sidecars = new Set<string>();
  for await (const object of storage.adapter.list('', { signal })) {
    if (object.key.endsWith(SIDECAR_EXTENSION)) sidecars.add(object.key.slice(0, -SIDECAR_EXTENSION.length));
    else if (!isSidecarKey(object.key)) objects.add(object.key);
  }
  const items: WorkItem[] = [];
  // A file without a sidecar is not known to be ours (docs/engine.md, retention): it is not checked.
  for (const key of [...sidecars].sort()) {
    let sidecar: ReadSidecar | null = null;
    let sidecarError: string | undefined;
    try {
      sidecar = await readSidecar(storage.adapter, key, signal);
    } catch (error) {
      if (signal.aborted) throw error;
      sidecarError = `the sidecar cannot be read: ${messageOf(error)}`;
    }
    if (jobId && sidecar?.jobId !== jobId) continue;
    items.push({ storage, key, hasObject: objects.has(key), sidecar, ...(sidecarError ? { sidecarError } : {}) });
  }
  return items;
}

async function verificationItem(storage: StorageInstance, key: string, signal: AbortSignal): Promise<WorkItem> {
  try {
    const sidecar = await readSidecar(storage.adapter, key, signal);
    return { storage, key, hasObject: true, sidecar, ...(sidecar ? {} : { sidecarError: 'no .meta.json sidecar: nothing to verify against' }) };
  } catch (error) {
    if (signal.aborted) throw error;
    return { storage, key, hasObject: true, sidecar: null, sidecarError: `the sidecar cannot be read: ${messageOf(error)}` };
  }
}

/**
 * Budgeted runs continue after the cursor the previous budgeted run of the same scope left, wrapping around, so
 * successive runs cover everything. Unbudgeted runs take every backup in order.
 */
async function orderForBudget(store: ExecutionStore, scope: string, budget: number | null, items: WorkItem[]): Promise<WorkItem[]> {
  const sorted = [...items].sort((a, b) => compare(`${a.storage.configId}${CURSOR_SEPARATOR}${a.key}`, `${b.storage.configId}${CURSOR_SEPARATOR}${b.key}`));
  if (!budget) return sorted;
  const previous = (await recentFinished(store, 'IntegrityCheck', { limit: 50 })).map((row) => JSON.parse(row.metadata ?? '{}') as { integrity?: IntegrityMetadata }).find((m) => m.integrity?.scope === scope && m.integrity.byteBudget);
  const cursor = previous?.integrity?.cursor;
  if (!cursor) return sorted;
  const next = sorted.findIndex((item) => compare(`${item.storage.configId}${CURSOR_SEPARATOR}${item.key}`, cursor) > 0);
  return next <= 0 ? sorted : [...sorted.slice(next), ...sorted.slice(0, next)];
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The profile key of an encrypted backup (cached per run); without it the file is still hashed, and a warning says so. */
async function keyFor(services: RunServices, cache: Map<string, Buffer | null>, sidecar: ReadSidecar, warn: (message: string) => void): Promise<Buffer | null> {
  const profileId = sidecar.encryption?.profileId;
  if (!sidecar.encryption) return null;
  // A public-key backup (issue 45) cannot be opened here by design: its SHA-256 is what the server can check.
  if (isAgeEncryption(sidecar.encryption)) return null;
  if (!profileId) {
    warn('the sidecar names no encryption profile; chunks not authenticated, only the SHA-256 checked');
    return null;
  }
  if (!cache.has(profileId)) {
    try {
      cache.set(profileId, await services.catalog.encryptionKey(profileId));
    } catch (error) {
      warn(`encryption profile ${profileId} unavailable (${messageOf(error)}); chunks not authenticated, only the SHA-256 checked`);
      cache.set(profileId, null);
    }
  }
  return cache.get(profileId) ?? null;
}
