import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { PART, partFrames, readParts, type CallFrame, type CreditedReadable, type CreditedSender } from '@holdfast/agents/protocol';
import type { ArchiveDumpRequest, ArchiveSnapshotRef, RestoreTarget, SourceAdapter } from '@holdfast/kernel';

/** What an archive call needs of the call runner. */
export interface ArchiveCallIo {
  /** The call's input stream (archiveDump: the chain's snapshot when incremental; archiveRestore: snapshot and ranges). */
  input: CreditedReadable;
  /** archiveDump: the framed output (the archive, then its index file). */
  output?: CreditedSender;
  signal: AbortSignal;
  send(frame: object): void;
}

/** Reads the single JSON part a stream starts with (the snapshot). */
async function readJsonPart<T>(parts: AsyncGenerator<{ kind: number; payload: Buffer }>): Promise<T> {
  const first = await parts.next();
  if (first.done || first.value.kind !== PART.snapshot) throw new Error('archive call: the stream does not start with its snapshot');
  return JSON.parse(first.value.payload.toString('utf8')) as T;
}

/**
 * archiveDump (docs/agents.md "Seekable archives through an agent"): the source writes a seekable archive here; its
 * bytes, then its index file, go to the server as parts of the call's output. Nothing is kept on the agent's disk.
 */
export async function runArchiveDump(frame: CallFrame, adapter: SourceAdapter, io: ArchiveCallIo): Promise<unknown> {
  const request = frame.options.archive as (Omit<ArchiveDumpRequest, 'createdAt' | 'previous'> & { createdAt: string; incremental?: boolean }) | undefined;
  if (!request || typeof request.archiveName !== 'string') throw new Error('archiveDump without an archive request');
  let previous: ArchiveSnapshotRef | undefined;
  if (request.incremental) {
    io.input.open();
    const parts = readParts(io.input, [PART.snapshot]);
    previous = await readJsonPart<ArchiveSnapshotRef>(parts);
    for await (const extra of parts) void extra; // the stream ends after the snapshot
  }
  const { incremental: _incremental, createdAt, ...rest } = request;
  const databases = Array.isArray(frame.options.databases) ? frame.options.databases.filter((item): item is string => typeof item === 'string') : [];
  const handle = await adapter.dump({
    databases,
    engineOptions: (frame.options.engineOptions ?? {}) as Record<string, unknown>,
    signal: io.signal,
    archive: { ...rest, createdAt: new Date(createdAt), ...(previous ? { previous } : {}) },
  });
  handle.done.catch(() => undefined);
  handle.stream.on('error', () => undefined);
  io.send({ type: 'opened', id: frame.id, extension: handle.extension });
  let stats: Awaited<typeof handle.done> | undefined;
  async function* framed(): AsyncGenerator<Buffer> {
    for await (const chunk of handle.stream as AsyncIterable<Buffer>) yield* partFrames(PART.bytes, chunk);
    stats = await handle.done;
    const indexFile = stats.archive?.indexFile;
    if (!indexFile) throw new Error('the source wrote no archive index');
    const pieces = Buffer.isBuffer(indexFile) ? [indexFile] : indexFile.chunks();
    for (const piece of pieces) yield* partFrames(PART.index, piece);
  }
  try {
    await io.output!.send(Readable.from(framed(), { objectMode: false }));
  } catch (error) {
    await handle.done;
    throw error;
  }
  io.send({ type: 'end', id: frame.id });
  const done = stats ?? (await handle.done);
  return {
    bytes: done.bytes,
    databases: done.databases,
    warnings: done.warnings,
    ...(done.engineVersion ? { engineVersion: done.engineVersion } : {}),
    archiveSize: done.archive?.archiveSize ?? 0,
    ...(done.archive?.summary ? { summary: done.archive.summary } : {}),
  };
}

/**
 * archiveRestore: the server sends the snapshot, then each selected member's stored bytes; they are written at their
 * offsets into sparse files (one per archive of the chain) in a private temporary folder, and the source restores
 * from those with range reads, checking each member's size and SHA-256 as it extracts (into its staging folder,
 * committed only when every member matched). A range the server did not send reads as missing bytes, failing that
 * member. The folder is removed afterwards whatever happened.
 */
export async function runArchiveRestore(frame: CallFrame, adapter: SourceAdapter, io: ArchiveCallIo): Promise<unknown> {
  if (!adapter.restoreArchive) throw new Error('this source adapter cannot restore seekable archives');
  const folder = await mkdtemp(join(tmpdir(), 'holdfast-agent-archive-'));
  const files = new Map<string, { path: string; handle: FileHandle }>();
  try {
    io.input.open();
    const parts = readParts(io.input, [PART.snapshot, PART.range, PART.bytes]);
    const { snapshot, include } = await readJsonPart<{ snapshot: ArchiveSnapshotRef & { requiredArchives?: string[] }; include: string[] }>(parts);
    const known = new Set([snapshot.archiveName, ...(snapshot.requiredArchives ?? []), ...(snapshot.entries as Array<{ archive?: string }>).map((entry) => entry.archive).filter((name): name is string => typeof name === 'string')]);
    let current: { handle: FileHandle; position: number; end: number } | undefined;
    for await (const part of parts) {
      if (part.kind === PART.range) {
        if (current && current.position !== current.end) throw new Error('archive restore: a member range ended early');
        const range = JSON.parse(part.payload.toString('utf8')) as { archive: string; offset: number; length: number };
        if (!known.has(range.archive) || !Number.isSafeInteger(range.offset) || !Number.isSafeInteger(range.length) || range.offset < 0 || range.length < 0) {
          throw new Error('archive restore: a member range outside the snapshot');
        }
        let file = files.get(range.archive);
        if (!file) {
          const path = join(folder, `archive-${files.size}`);
          file = { path, handle: await open(path, 'w', 0o600) };
          files.set(range.archive, file);
        }
        current = { handle: file.handle, position: range.offset, end: range.offset + range.length };
      } else if (part.kind === PART.bytes) {
        if (!current || current.position + part.payload.length > current.end) throw new Error('archive restore: bytes outside a member range');
        await current.handle.write(part.payload, 0, part.payload.length, current.position);
        current.position += part.payload.length;
      } else {
        throw new Error('archive restore: a second snapshot');
      }
    }
    if (current && current.position !== current.end) throw new Error('archive restore: the last member range ended early');
    for (const file of files.values()) await file.handle.close();
    const rangeReaderFor = (archive: string) => {
      const file = files.get(archive);
      return async (start: number, end: number): Promise<Readable> => {
        if (!file) throw new Error(`archive restore: the server sent nothing of archive ${archive}`);
        return createReadStream(file.path, { start, end });
      };
    };
    const overwrite = typeof frame.options.overwrite === 'boolean' ? frame.options.overwrite : undefined;
    return await adapter.restoreArchive(
      { snapshot, rangeReaderFor, ...(include.length > 0 ? { include } : {}) },
      { target: (frame.options.target ?? {}) as RestoreTarget, signal: io.signal, ...(overwrite === undefined ? {} : { overwrite }) },
    );
  } finally {
    for (const file of files.values()) await file.handle.close().catch(() => undefined);
    await rm(folder, { recursive: true, force: true });
  }
}
