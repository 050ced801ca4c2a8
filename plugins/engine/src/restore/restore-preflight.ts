import { readdir, stat } from 'node:fs/promises';
import { ConflictError, HttpError, type JobCatalog, type ResolvedAdapterConfig, type RestoreTarget, type SourceAdapter } from '@holdfast/kernel';
import { disposeAll, type AdapterFactory } from '../run/adapters.js';
import { messageOf } from '../run/outcome.js';
import { readSidecar } from '../run/sidecar.js';
import type { RestoreRequest } from './restore-request.js';

// Issue 47: a restore replaced an existing database with one click. Before a restore is queued, the route works out
// what it would write over and refuses (409, nothing queued) unless the request says `overwrite: true`
// (docs/api.md, "Restores: overwriting is explicit").

/** How long the target source may take to list its databases before the request gives up (502). */
export const LISTING_TIMEOUT_MS = 20_000;

/**
 * The database names a restore writes into, resolved as the sources resolve them: `database`, else the mapping of
 * the backed-up database, else the first mapping value, else the original name (the one the backup records: what
 * an empty target means). Several databases: each one's mapping, else its own name. `paths` (seekable archives)
 * restores only the databases it names.
 */
export function plannedDatabases(recorded: readonly string[], request: Pick<RestoreRequest, 'database' | 'databaseMapping' | 'paths'>): string[] {
  const { database, databaseMapping: mapping, paths } = request;
  const named = paths ? recorded.filter((name) => paths.some((path) => path === name || path.startsWith(`${name}/`))) : [...recorded];
  const selected = named.length > 0 ? named : [...recorded];
  if (selected.length <= 1) {
    const original = selected[0];
    const target = database ?? (original ? mapping?.[original] : undefined) ?? Object.values(mapping ?? {})[0] ?? original;
    return target ? [target] : [];
  }
  return [...new Set(selected.map((name, index) => mapping?.[name] ?? (!mapping && index === 0 && database ? database : name)))];
}

/** The `RestoreTarget` the run builds from a request (restore-run.ts). */
export function restoreTargetOf(request: RestoreRequest): RestoreTarget {
  return {
    database: request.database,
    databaseMapping: request.databaseMapping,
    path: request.targetPath,
    originalPaths: request.restoreToOriginalPaths,
    keepSpecialModes: request.keepSpecialModes,
  };
}

const quoted = (names: readonly string[]) => names.map((name) => `"${name}"`).join(', ');

/** 502: the target source could not be reached (the connection check of a restore, or the database listing). */
export function unreachableSource(name: string, error: unknown): HttpError {
  return new HttpError(502, `Source "${name}" could not be reached to list its databases: ${messageOf(error).replace(/^\[[^\]]+\] /, '')}`);
}

/** `source.listDatabases()`, bounded by {@link LISTING_TIMEOUT_MS}; an error or a timeout is a 502 naming the source. */
export async function listWithin<T>(name: string, listing: () => Promise<T>, timeoutMs = LISTING_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
  });
  try {
    return await Promise.race([listing(), timeout]);
  } catch (error) {
    throw unreachableSource(name, error);
  } finally {
    clearTimeout(timer);
  }
}

/** True when `path` is a folder holding at least one entry (a missing path, or a file, is not: the run decides). */
async function isNonEmptyFolder(path: string): Promise<boolean> {
  const info = await stat(path).catch(() => null);
  if (!info?.isDirectory()) return false;
  return (await readdir(path).catch(() => [])).length > 0;
}

/**
 * Refuses (409) a restore that would write over existing data without `overwrite: true`, and a target source that
 * cannot be reached (502). What it cannot know lets the restore through, as before: no sidecar (the run fails on
 * that itself), a target source excluded from restores (the run refuses it), a source whose adapter does not declare
 * `listDatabases`.
 */
export async function refuseAccidentalOverwrite(deps: { catalog: JobCatalog; adapters: AdapterFactory }, request: RestoreRequest, signal?: AbortSignal): Promise<void> {
  if (request.overwrite === true) return;
  const storage = deps.adapters.storage(await deps.catalog.resolveAdapterConfig(request.storageId));
  let sidecar;
  try {
    sidecar = await readSidecar(storage.adapter, request.file, signal).catch(() => null);
  } finally {
    await disposeAll([storage.adapter]);
  }
  if (!sidecar) return;
  const sourceId = request.targetSourceId ?? sidecar.source?.configId;
  if (!sourceId) return;
  const target: ResolvedAdapterConfig | null = await deps.catalog.resolveAdapterConfig(sourceId).catch(() => null);
  if (!target || target.kind !== 'source' || target.excludeFromRestore) return;

  if (deps.adapters.isFileArchive(target.adapterId) && (request.targetPath || request.restoreToOriginalPaths)) {
    if (request.restoreToOriginalPaths) {
      throw new ConflictError(
        `restoreToOriginalPaths writes over the folders source "${target.name}" backs up (files of the same name are replaced); send "overwrite": true to do that, or restore into a new folder with targetPath`,
      );
    }
    // A folder on an agent's host is not on this disk: the agent's restore itself refuses to write into a non-empty
    // folder (RestoreOptions.overwrite false), failing the run instead of answering 409 here.
    if (request.targetPath && !target.agentId && (await isNonEmptyFolder(request.targetPath))) {
      throw new ConflictError(
        `The folder "${request.targetPath}" is not empty: the restore would replace the files of the same name in it (other files are kept); send "overwrite": true to do that, or choose an empty or new folder`,
      );
    }
    return;
  }
  const isListable = !deps.adapters.isFileArchive(target.adapterId) && deps.adapters.canListDatabases(target.adapterId);
  const planned = isListable ? plannedDatabases(sidecar.databases ?? [], request) : [];
  let source: SourceAdapter | undefined;
  let existing: string[] = [];
  try {
    source = deps.adapters.source(target);
    const instance = source;
    // A source that works out itself what its restore would write over (a volume restored into itself) is asked.
    if (instance.restoreWouldReplace) {
      const occupied = await listWithin(target.name, () => instance.restoreWouldReplace!(restoreTargetOf(request), signal));
      if (occupied.length > 0) {
        throw new ConflictError(
          `${quoted(occupied)} on source "${target.name}" ${occupied.length === 1 ? 'is' : 'are'} not empty: the restore would write over ${occupied.length === 1 ? 'it' : 'them'} (files of the same name are replaced). Send "overwrite": true to do that, or restore into a new, empty target`,
        );
      }
      return;
    }
    if (planned.length === 0) return;
    existing = await listWithin(target.name, () => instance.listDatabases());
  } finally {
    await disposeAll([source]);
  }
  const clashes = planned.filter((name) => existing.includes(name));
  if (clashes.length === 0) return;
  const one = clashes.length === 1;
  throw new ConflictError(
    `${one ? 'Database' : 'Databases'} ${quoted(clashes)} already ${one ? 'exists' : 'exist'} on source "${target.name}": the restore would drop ${one ? 'it' : 'them'} and replace ${one ? 'it' : 'them'} with the backup. Send "overwrite": true to do that, or restore into a new database (database / databaseMapping)`,
  );
}
