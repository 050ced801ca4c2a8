import { Readable } from 'node:stream';
import { AdapterError, awaitFirstByte, isAbortError, type DumpHandle, type DumpStats, type SshTarget } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../config.js';
import { ORIGIN, connectionArgs, scrub } from './connection.js';
import { MAX_CHUNK, encodeFrame, encodePreamble } from './multi-dump-format.js';
import { startTool } from './tool-process.js';

/** pg_dump's `-Z` level from the job's `pgCompression` ('' keeps pg_dump's default). */
export function compressionArgs(pgCompression: unknown): string[] {
  if (pgCompression === undefined || pgCompression === null || pgCompression === '') return [];
  const level = String(pgCompression);
  if (!/^[0-9]$/.test(level)) {
    throw new AdapterError(ORIGIN, 'CONFIG', `pgCompression must be a level from 0 to 9, got "${level}"`);
  }
  return ['--compress', level];
}

/**
 * Yields the output of one `pg_dump -Fc`. The process must exit 0: a dump that dies midway throws after its last
 * byte, so the consumer's stream errors instead of ending, and a truncated dump is never taken for a whole one.
 */
async function* pgDumpOutput(
  config: PostgresSourceConfig,
  ssh: SshTarget | undefined,
  database: string,
  extraArgs: string[],
  signal: AbortSignal,
): AsyncGenerator<Buffer> {
  const args = ['--format=custom', ...extraArgs, ...connectionArgs(config, database)];
  const tool = await startTool(config, ssh, 'pg_dump', args, signal);
  try {
    for await (const chunk of tool.stdout) yield chunk as Buffer;
    const code = await tool.exited;
    if (code !== 0) {
      throw new AdapterError(ORIGIN, signal.aborted ? 'ABORTED' : 'TRANSIENT', `pg_dump of "${database}" failed (exit ${String(code)}): ${scrub(tool.stderrTail(), config)}`);
    }
  } catch (error) {
    if (signal.aborted || isAbortError(error)) throw new AdapterError(ORIGIN, 'ABORTED', `dump of "${database}" was aborted`);
    if (error instanceof AdapterError) throw error;
    throw new AdapterError(ORIGIN, 'TRANSIENT', `pg_dump of "${database}" failed: ${scrub(tool.stderrTail() || String(error), config)}`, { cause: error });
  } finally {
    await tool.stop();
  }
}

/** Frames several dumps into one multi-dump stream (see multi-dump-format.ts). */
async function* multiDumpOutput(
  config: PostgresSourceConfig,
  ssh: SshTarget | undefined,
  databases: string[],
  extraArgs: string[],
  signal: AbortSignal,
): AsyncGenerator<Buffer> {
  yield encodePreamble();
  for (const database of databases) {
    yield encodeFrame('D', Buffer.from(JSON.stringify({ name: database }), 'utf8'));
    for await (const chunk of pgDumpOutput(config, ssh, database, extraArgs, signal)) {
      for (let offset = 0; offset < chunk.length; offset += MAX_CHUNK) {
        yield encodeFrame('C', chunk.subarray(offset, offset + MAX_CHUNK));
      }
    }
    yield encodeFrame('E');
  }
  yield encodeFrame('Z', Buffer.from(JSON.stringify({ databases: databases.length }), 'utf8'));
}

/**
 * Starts the dump and waits for its first byte, so a failure at connect time rejects here, before anything is
 * uploaded. One database gives plain `pg_dump -Fc` output (`.dump`); several give the multi-dump (`.pgdumps`).
 */
export async function startDump(
  config: PostgresSourceConfig,
  ssh: SshTarget | undefined,
  databases: string[],
  engineOptions: Readonly<Record<string, unknown>> | undefined,
  signal: AbortSignal,
  engineVersion: string,
): Promise<DumpHandle> {
  const extraArgs = compressionArgs(engineOptions?.pgCompression);
  const isSingle = databases.length === 1;
  const source = isSingle
    ? pgDumpOutput(config, ssh, databases[0]!, extraArgs, signal)
    : multiDumpOutput(config, ssh, databases, extraArgs, signal);
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
  const onAbort = () => stream.destroy(new AdapterError(ORIGIN, 'ABORTED', 'dump was aborted'));
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
