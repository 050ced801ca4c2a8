import { Readable } from 'node:stream';
import { AdapterError, awaitFirstByte, isAbortError, type DumpHandle, type DumpStats, type SshTarget } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../config.js';
import { ORIGIN, connectionArgs, scrub } from './connection.js';
import { MAX_CHUNK, MULTI_VERSION, MULTI_VERSION_GLOBALS, encodeFrame, encodePreamble } from './multi-dump-format.js';
import { startTool, type PgTool } from './tool-process.js';

/**
 * pg_dump's `--compress` from the job: `pgCompression` `0`-`9` is passed as it is. Empty (every job's default) lets
 * the adapter choose from the job's engine compression (`engineCompression`): with ZSTD or GZIP, pg_dump's own zlib
 * is turned off (`-Z0`), because the engine compresses on several threads, which is faster than pg_dump's
 * single-threaded zlib and no larger than zlib-then-the-codec (GZIP 3 on a 528 MiB database: 6.6 s and 124 MiB
 * against 13.6 s and 127 MiB); with BROTLI or NONE pg_dump keeps its default, so a job without engine compression
 * still writes a compressed dump. Measurements: docs/benchmarks.md.
 */
export function compressionArgs(pgCompression: unknown, engineCompression?: unknown): string[] {
  if (pgCompression === undefined || pgCompression === null || pgCompression === '') {
    return engineCompression === 'ZSTD' || engineCompression === 'GZIP' ? ['--compress', '0'] : [];
  }
  const level = String(pgCompression);
  if (!/^[0-9]$/.test(level)) {
    throw new AdapterError(ORIGIN, 'CONFIG', `pgCompression must be a level from 0 to 9, got "${level}"`);
  }
  return ['--compress', level];
}

/**
 * Yields the stdout of one dump tool. The process must exit 0: a dump that dies midway throws after its last
 * byte, so the consumer's stream errors instead of ending, and a truncated dump is never taken for a whole one.
 */
async function* toolOutput(
  config: PostgresSourceConfig,
  ssh: SshTarget | undefined,
  tool: PgTool,
  args: string[],
  what: string,
  signal: AbortSignal,
): AsyncGenerator<Buffer> {
  const process = await startTool(config, ssh, tool, args, signal);
  try {
    for await (const chunk of process.stdout) yield chunk as Buffer;
    const code = await process.exited;
    if (code !== 0) {
      throw new AdapterError(ORIGIN, signal.aborted ? 'ABORTED' : 'TRANSIENT', `${tool} of ${what} failed (exit ${String(code)}): ${scrub(process.stderrTail(), config)}`);
    }
  } catch (error) {
    if (signal.aborted || isAbortError(error)) throw new AdapterError(ORIGIN, 'ABORTED', `dump of ${what} was aborted`);
    if (error instanceof AdapterError) throw error;
    throw new AdapterError(ORIGIN, 'TRANSIENT', `${tool} of ${what} failed: ${scrub(process.stderrTail() || String(error), config)}`, { cause: error });
  } finally {
    await process.stop();
  }
}

/** The output of one `pg_dump -Fc`. */
export function pgDumpOutput(config: PostgresSourceConfig, ssh: SshTarget | undefined, database: string, extraArgs: string[], signal: AbortSignal): AsyncGenerator<Buffer> {
  const args = ['--format=custom', ...extraArgs, ...connectionArgs(config, database)];
  return toolOutput(config, ssh, 'pg_dump', args, `"${database}"`, signal);
}

/** The SQL of `pg_dumpall --globals-only` (roles, role settings and memberships, tablespaces). */
export function globalsOutput(config: PostgresSourceConfig, ssh: SshTarget | undefined, signal: AbortSignal): AsyncGenerator<Buffer> {
  // pg_dumpall's --dbname is a connection string; --database names the database it connects to.
  const args = [
    '--globals-only',
    ...(config.globalsWithoutRolePasswords ? ['--no-role-passwords'] : []),
    ...['--host', config.host, '--port', String(config.port), '--username', config.user, '--no-password'],
    ...['--database', config.maintenanceDatabase],
  ];
  return toolOutput(config, ssh, 'pg_dumpall', args, 'the cluster globals', signal);
}

/**
 * Reads a tool's whole output before yielding it. Used for the globals only, which are small (a few hundred bytes
 * per role) and which pg_dumpall starts printing before its first query: held back, a refused read of pg_authid
 * fails dump() itself instead of a stream that already started.
 */
async function* whole(source: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of source) chunks.push(chunk);
  yield Buffer.concat(chunks);
}

/** Cuts a tool's output into 'C' frames of at most MAX_CHUNK bytes. */
async function* chunkFrames(source: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    for (let offset = 0; offset < chunk.length; offset += MAX_CHUNK) {
      yield encodeFrame('C', chunk.subarray(offset, offset + MAX_CHUNK));
    }
  }
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');

/**
 * Frames several dumps into one multi-dump stream (see multi-dump-format.ts). With the globals, the archive is
 * version 2 and starts with them, so a restore can create the roles before the objects that belong to them. The
 * server version is recorded in the headers, so a restore can refuse an older target before it writes anything.
 */
async function* multiDumpOutput(
  config: PostgresSourceConfig,
  ssh: SshTarget | undefined,
  databases: string[],
  extraArgs: string[],
  signal: AbortSignal,
  serverVersion: string,
): AsyncGenerator<Buffer> {
  const withGlobals = config.includeGlobals;
  // Small framing bytes wait for the next tool output: the stream's first byte is then real dump data, so a tool
  // that fails at start (pg_dumpall without the right to read pg_authid) fails dump() before anything is uploaded.
  let pending: Buffer[] = [encodePreamble(withGlobals ? MULTI_VERSION_GLOBALS : MULTI_VERSION)];
  async function* section(header: Buffer, body: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
    pending.push(header);
    for await (const frame of chunkFrames(body)) {
      yield pending.length > 0 ? Buffer.concat([...pending, frame]) : frame;
      pending = [];
    }
    pending.push(encodeFrame('E'));
  }
  if (withGlobals) yield* section(encodeFrame('G', json({ serverVersion })), whole(globalsOutput(config, ssh, signal)));
  for (const database of databases) {
    yield* section(encodeFrame('D', json({ name: database, serverVersion })), pgDumpOutput(config, ssh, database, extraArgs, signal));
  }
  pending.push(encodeFrame('Z', json(withGlobals ? { databases: databases.length, globals: true } : { databases: databases.length })));
  yield Buffer.concat(pending);
}

/**
 * Starts the dump and waits for its first byte, so a failure at connect time rejects here, before anything is
 * uploaded. One database gives plain `pg_dump -Fc` output (`.dump`); several, or any number with the globals, give
 * the multi-dump (`.pgdumps`).
 */
export async function startDump(
  config: PostgresSourceConfig,
  ssh: SshTarget | undefined,
  databases: string[],
  engineOptions: Readonly<Record<string, unknown>> | undefined,
  signal: AbortSignal,
  engineVersion: string,
): Promise<DumpHandle> {
  const extraArgs = compressionArgs(engineOptions?.pgCompression, engineOptions?.engineCompression);
  const isSingle = databases.length === 1 && !config.includeGlobals;
  const source = isSingle
    ? pgDumpOutput(config, ssh, databases[0]!, extraArgs, signal)
    : multiDumpOutput(config, ssh, databases, extraArgs, signal, engineVersion);
  let bytes = 0;
  let settle!: { resolve: (stats: DumpStats) => void; reject: (error: unknown) => void };
  const done = new Promise<DumpStats>((resolve, reject) => (settle = { resolve, reject }));
  done.catch(() => undefined);
  const stream = Readable.from(
    (async function* counted() {
      try {
        for await (const chunk of source) {
          bytes += chunk.length;
          yield chunk;
        }
        settle.resolve({ bytes, databases, engineVersion, warnings: [] });
      } catch (error) {
        settle.reject(error);
        throw error;
      }
    })(),
    { objectMode: false, highWaterMark: 1024 * 1024 },
  );
  // A consumer that stops early (error elsewhere, abort) destroys the stream: the generators' finally blocks kill pg_dump.
  // An abort destroys it too: with nobody reading, the generator sits at a `yield` and would never see pg_dump die,
  // leaving `done` unsettled (found by the conformance suite's abort check, issue 10.13).
  // Quietly when nobody listens: an unheard 'error' is an uncaught exception that stops the process (`done` still
  // rejects, through the 'close' below).
  const onAbort = () => stream.destroy(stream.listenerCount('error') > 0 ? new AdapterError(ORIGIN, 'ABORTED', 'dump was aborted') : undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  stream.once('close', () => {
    signal.removeEventListener('abort', onAbort);
    if (!stream.readableEnded) settle.reject(new AdapterError(ORIGIN, 'ABORTED', 'dump stream closed before it ended'));
  });
  try {
    await awaitFirstByte(stream, signal);
  } catch (error) {
    stream.destroy();
    throw error;
  }
  return { stream, done, extension: isSingle ? '.dump' : '.pgdumps' };
}
