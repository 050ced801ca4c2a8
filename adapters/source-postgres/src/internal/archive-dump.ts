import { Readable } from 'node:stream';
import { AdapterError, createArchiveWriter, type ArchiveDumpRequest, type DumpHandle, type DumpStats, type SshTarget } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../config.js';
import { ORIGIN } from './connection.js';
import { compressionArgs, globalsOutput, pgDumpOutput } from './dump.js';

/** Archive path of the cluster globals (the SQL of `pg_dumpall --globals-only`) in a PostgreSQL archive. */
export const GLOBALS_MEMBER = 'globals.sql';

/** Everything one archive-mode dump needs. */
export interface ArchiveDumpPlan {
  config: PostgresSourceConfig;
  ssh: SshTarget | undefined;
  /** The databases to dump, in archive order (at least one). */
  databases: string[];
  request: ArchiveDumpRequest;
  engineOptions: Readonly<Record<string, unknown>> | undefined;
  signal: AbortSignal;
  engineVersion: string;
}

/**
 * Refuses an incremental request: a database dump has no unchanged files to reference, so a PostgreSQL archive is
 * always a standalone full archive. Checked before anything connects.
 */
export function assertStandaloneArchive(request: ArchiveDumpRequest): void {
  if (request.previous !== undefined || (request.chain ?? null) !== null) {
    throw new AdapterError(
      ORIGIN,
      'UNSUPPORTED',
      'a PostgreSQL archive is always a standalone full backup: incremental chains (archive.chain, archive.previous) are for directory sources; request the archive with chain null and no previous snapshot',
    );
  }
}

/**
 * pg_dump's `--compress` in archive mode: off (`-Z0`) unless the job sets `pgCompression` explicitly, because the
 * archive compresses every member with the job's codec and zlib-then-zstd costs CPU for nothing.
 */
export function archiveCompressionArgs(pgCompression: unknown): string[] {
  return pgCompression === undefined || pgCompression === null || pgCompression === '' ? ['--compress', '0'] : compressionArgs(pgCompression);
}

/** Starts a tool's output and waits for its first chunk, so a failure at connect time rejects here. */
async function primed(source: AsyncGenerator<Buffer>): Promise<AsyncGenerator<Buffer>> {
  const head = await source.next();
  return (async function* replay() {
    if (head.done) return;
    yield head.value;
    yield* source;
  })();
}

async function collect(source: AsyncGenerator<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of source) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Settles once the consumer has read the whole archive; a stream closed before its end is an abort. */
function ended(stream: Readable): Promise<void> {
  if (stream.readableEnded) return Promise.resolve();
  return new Promise((resolve, reject) => {
    stream.once('end', resolve);
    stream.once('close', () => (stream.readableEnded ? resolve() : reject(new AdapterError(ORIGIN, 'ABORTED', 'the archive stream was closed before it ended'))));
  });
}

/**
 * Writes the databases as a Holdfast seekable archive (docs/formats/archive.md): the globals first as the file
 * member `globals.sql` when `includeGlobals` is on, then one `pg_dump -Fc` member per database, one pg_dump at a
 * time with the writer's backpressure. As in the plain path, the globals are read whole and the first pg_dump must
 * give its first byte before this resolves, so a refused login or `pg_authid` read fails `dump()` itself.
 */
export async function startArchiveDump(plan: ArchiveDumpPlan): Promise<DumpHandle> {
  const { config, ssh, databases, request } = plan;
  const extraArgs = archiveCompressionArgs(plan.engineOptions?.pgCompression);
  // The tools stop on the caller's abort and also when the consumer goes away (the writer closes early).
  const stop = new AbortController();
  const signal = AbortSignal.any([plan.signal, stop.signal]);
  const globals = config.includeGlobals ? await collect(globalsOutput(config, ssh, signal)) : undefined;
  const firstOutput = pgDumpOutput(config, ssh, databases[0]!, extraArgs, signal);
  const first = await primed(firstOutput);
  const writer = createArchiveWriter({
    archiveName: request.archiveName,
    createdAt: request.createdAt,
    chain: null,
    compression: request.compression,
    ...(request.compressionLevel !== undefined ? { compressionLevel: request.compressionLevel } : {}),
  });
  // Quietly when nobody listens: an unheard 'error' is an uncaught exception that stops the process (`done` rejects).
  const onAbort = () => writer.destroy(writer.listenerCount('error') > 0 ? new AdapterError(ORIGIN, 'ABORTED', 'dump was aborted') : undefined);
  writer.once('close', () => {
    plan.signal.removeEventListener('abort', onAbort);
    stop.abort();
  });
  if (plan.signal.aborted) {
    writer.destroy();
    await firstOutput.return(undefined);
    throw new AdapterError(ORIGIN, 'ABORTED', 'dump was aborted');
  }
  plan.signal.addEventListener('abort', onAbort, { once: true });

  const produce = async (): Promise<DumpStats> => {
    if (globals) await writer.addFile({ path: GLOBALS_MEMBER, size: globals.length, mode: 0o600 }, Readable.from([globals]));
    for (const [position, database] of databases.entries()) {
      const output = position === 0 ? first : pgDumpOutput(config, ssh, database, extraArgs, signal);
      await writer.addDatabaseDump(database, Readable.from(output, { objectMode: false, highWaterMark: 1024 * 1024 }));
    }
    const result = await writer.finish();
    const dumpBytes = result.index.entries.reduce((sum, entry) => sum + (entry.kind === 'database-dump' ? (entry.size ?? 0) : 0), 0);
    const summary = { databases: databases.length, globals: globals ? 1 : 0, dumpBytes };
    return { bytes: result.archiveSize, databases, engineVersion: plan.engineVersion, warnings: [], archive: { ...result, summary } };
  };
  const done = produce().then(
    async (stats) => {
      await ended(writer);
      return stats;
    },
    async (error: unknown) => {
      const failure = plan.signal.aborted ? new AdapterError(ORIGIN, 'ABORTED', 'dump was aborted') : toDumpError(error, writer);
      if (!writer.destroyed) writer.destroy(writer.listenerCount('error') > 0 ? failure : undefined);
      // The first pg_dump was started before the writer: when the archive failed before reaching it, stop it here.
      await firstOutput.return(undefined);
      throw failure;
    },
  );
  done.catch(() => undefined);
  return { stream: writer, done, extension: '.hfa' };
}

function toDumpError(error: unknown, writer: Readable): AdapterError {
  if (error instanceof AdapterError) return error;
  const message = error instanceof Error ? error.message : String(error);
  // Destroyed without an error: the consumer closed the stream early (a failure would be in `errored`).
  if (writer.destroyed && !writer.errored) return new AdapterError(ORIGIN, 'ABORTED', `the archive stream was closed before it ended: ${message}`, { cause: error });
  return new AdapterError(ORIGIN, 'TRANSIENT', `writing the archive failed: ${message}`, { cause: error });
}
