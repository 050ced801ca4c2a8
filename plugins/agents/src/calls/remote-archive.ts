import { createHash } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import {
  AdapterError,
  type ArchiveIndexSummary,
  type ArchiveRestoreInput,
  type DumpHandle,
  type DumpOptions,
  type DumpStats,
  type RestoreOptions,
  type RestoreResult,
} from '@holdfast/kernel';
import { PART, partFrames, readParts } from './archive-parts.js';
import type { CallHandle, CallRequest } from './call-channel.js';

/** The feature an agent's hello lists when it runs seekable archive calls. */
export const ARCHIVE_FEATURE = 'archive';

/** Starts a call on the source's agent (RemoteSource's own start, asking for the archive feature). */
export type StartArchiveCall = (method: CallRequest['method'], options: Record<string, unknown>, extra: Partial<CallRequest>) => Promise<CallHandle>;

/** What the agent's archiveDump answers besides the stream: the dump's stats without the index. */
interface ArchiveDumpValue {
  bytes: number;
  databases: string[];
  engineVersion?: string;
  warnings: string[];
  archiveSize: number;
  summary?: Record<string, number>;
}

/** The entries the engine reads of an index (`decodeIndexFile` of @holdfast/archive, checked the same way). */
function indexSummary(indexFile: Buffer): ArchiveIndexSummary {
  // docs/formats/archive.md: "HOLDFAST-INDEX 1 sha256=", the SHA-256 of the JSON in hex, a newline, the JSON.
  const newline = indexFile.indexOf(0x0a);
  const head = newline > 0 ? indexFile.subarray(0, newline).toString('latin1') : '';
  const recorded = /^HOLDFAST-INDEX 1 sha256=([0-9a-f]{64})$/.exec(head)?.[1];
  const json = indexFile.subarray(newline + 1);
  if (!recorded || createHash('sha256').update(json).digest('hex') !== recorded) {
    throw new AdapterError('source-agent', 'TRANSIENT', 'the agent sent an index file that does not match its checksum');
  }
  const parsed = JSON.parse(json.toString('utf8')) as ArchiveIndexSummary;
  if (!Array.isArray(parsed.entries)) throw new AdapterError('source-agent', 'TRANSIENT', 'the agent sent an index file without entries');
  return parsed;
}

/**
 * A seekable archive written on the agent: the call's output carries the archive's bytes, then its index file
 * (archive-parts.ts); the engine gets the archive as the dump's stream and the index in the stats, as from a local
 * source. An incremental run's chain snapshot (`previous`) goes to the agent as the call's input.
 */
export async function remoteArchiveDump(start: StartArchiveCall, options: DumpOptions): Promise<DumpHandle> {
  const { previous, createdAt, ...request } = options.archive!;
  const input = previous ? Readable.from(partFrames(PART.snapshot, Buffer.from(JSON.stringify(previous)))) : undefined;
  const call = await start(
    'archiveDump',
    { databases: options.databases, engineOptions: options.engineOptions ?? {}, archive: { ...request, createdAt: createdAt.toISOString(), incremental: Boolean(previous) } },
    { output: true, signal: options.signal, ...(input ? { input } : {}) },
  );
  const { extension, stream: framed } = await call.opened;
  const archive = new PassThrough();
  // A reader that gives up on the archive (the engine's upload failed, the run was cancelled) ends the call on the
  // agent, as destroying a plain dump's stream does: otherwise the agent would wait for credit for ever.
  archive.once('close', () => {
    if (!archive.writableFinished) framed.destroy();
  });
  const indexPieces: Buffer[] = [];
  let archiveBytes = 0;
  const demuxed = (async () => {
    for await (const part of readParts(framed, [PART.bytes, PART.index])) {
      if (part.kind === PART.index) {
        indexPieces.push(Buffer.from(part.payload));
        continue;
      }
      if (indexPieces.length > 0) throw new AdapterError('source-agent', 'TRANSIENT', 'the agent sent archive bytes after the index');
      if (archive.destroyed) throw new AdapterError('source-agent', 'ABORTED', 'the archive stream was closed by its reader');
      archiveBytes += part.payload.length;
      if (!archive.write(part.payload)) {
        await new Promise((resolve) => {
          archive.once('drain', resolve);
          archive.once('close', resolve);
        });
      }
    }
    archive.end();
  })();
  demuxed.catch((error: Error) => {
    archive.destroy(error);
    framed.destroy();
  });
  const done = (async (): Promise<DumpStats> => {
    const value = (await call.result) as ArchiveDumpValue;
    await demuxed;
    const indexFile = Buffer.concat(indexPieces);
    if (value.archiveSize !== archiveBytes) throw new AdapterError('source-agent', 'TRANSIENT', `the agent reported an archive of ${value.archiveSize} bytes but sent ${archiveBytes}`);
    return {
      bytes: value.bytes,
      databases: value.databases,
      warnings: value.warnings,
      ...(value.engineVersion ? { engineVersion: value.engineVersion } : {}),
      archive: { index: indexSummary(indexFile), indexFile, archiveSize: value.archiveSize, ...(value.summary ? { summary: value.summary } : {}) },
    };
  })();
  done.catch(() => undefined);
  return { extension, stream: archive, done };
}

interface MemberRange {
  archive: string;
  offset: number;
  length: number;
}

/** True when `path` is one of the requested paths or lies below one of them (the directory source's rule). */
function selects(include: readonly string[] | undefined, path: string): boolean {
  if (!include || include.length === 0) return true;
  return include.some((wanted) => path === wanted || path.startsWith(`${wanted.replace(/\/+$/, '')}/`));
}

/**
 * The member ranges a restore of `input` reads: every selected file (and database dump) and the targets of selected
 * hard links, by archive and offset. The server decides them; the agent only reads what it was sent.
 */
function rangesToSend(input: ArchiveRestoreInput): MemberRange[] {
  type Entry = { path: string; kind: string; archive?: string; offset?: number; length?: number; target?: string };
  const entries = input.snapshot.entries as readonly Entry[];
  // Database archives (PostgreSQL) select by database name and restore their globals member as they decide: every
  // member is sent (the dumps are what a restore reads anyway). Folder archives select by path, as here.
  const include = entries.some((entry) => entry.kind === 'database-dump') ? undefined : input.include;
  const wanted = entries.filter((entry) => selects(include, entry.path));
  const linkTargets = new Set(wanted.filter((entry) => entry.kind === 'hardlink' && entry.target).map((entry) => entry.target as string));
  const ranges = new Map<string, MemberRange>();
  for (const entry of entries) {
    if (entry.kind !== 'file' && entry.kind !== 'database-dump') continue;
    if (!selects(include, entry.path) && !linkTargets.has(entry.path)) continue;
    const archive = entry.archive ?? input.snapshot.archiveName;
    if (typeof entry.offset !== 'number' || typeof entry.length !== 'number') continue;
    ranges.set(`${archive}\u0000${entry.offset}`, { archive, offset: entry.offset, length: entry.length });
  }
  return [...ranges.values()].sort((a, b) => (a.archive === b.archive ? a.offset - b.offset : a.archive < b.archive ? -1 : 1));
}

/**
 * A seekable archive restored on the agent without the agent asking for anything: the server sends the snapshot, then
 * each selected member's stored bytes (read here with `rangeReaderFor`, decrypted by the engine), and the agent
 * restores from what it received, checking each member's size and SHA-256 as the local path does.
 */
export async function remoteArchiveRestore(start: StartArchiveCall, input: ArchiveRestoreInput, options: RestoreOptions): Promise<RestoreResult> {
  const ranges = rangesToSend(input);
  async function* frames(): AsyncGenerator<Buffer> {
    yield* partFrames(PART.snapshot, Buffer.from(JSON.stringify({ snapshot: input.snapshot, include: input.include ?? [] })));
    for (const range of ranges) {
      yield* partFrames(PART.range, Buffer.from(JSON.stringify(range)));
      if (range.length === 0) continue;
      const reader = await input.rangeReaderFor(range.archive)(range.offset, range.offset + range.length - 1);
      for await (const chunk of reader as AsyncIterable<Buffer>) yield* partFrames(PART.bytes, chunk);
    }
  }
  const stream = Readable.from(frames(), { objectMode: false });
  const call = await start('archiveRestore', { target: options.target, ...(options.overwrite === undefined ? {} : { overwrite: options.overwrite }) }, { input: stream, signal: options.signal });
  try {
    return (await call.result) as RestoreResult;
  } finally {
    if (!stream.destroyed && !stream.readableEnded) stream.destroy();
  }
}

