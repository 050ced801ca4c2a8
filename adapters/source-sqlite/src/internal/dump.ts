import { createReadStream } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AdapterError, type DumpHandle, toDumpHandle } from '@holdfast/sdk';
import type { SqliteSourceConfig } from '../config.js';
import { cliError, ORIGIN, runCli } from './sqlite-cli.js';

/**
 * Copies the live database into `copy` with the online backup API (`.backup`). The copy runs inside one read
 * transaction: in WAL mode writers go on meanwhile and the copy is the snapshot at its start (without it, every
 * commit of another process restarts the backup, which then never ends under steady writes); in rollback-journal
 * mode writers wait (up to their busy timeout) until the copy is done.
 */
async function backupTo(config: SqliteSourceConfig, source: string, copy: string, signal: AbortSignal): Promise<void> {
  const args = [
    '-readonly',
    source,
    `.timeout ${config.busyTimeoutSeconds * 1000}`,
    'BEGIN;',
    // The first read opens the read transaction whose snapshot the backup copies.
    'SELECT count(*) FROM sqlite_schema;',
    `.backup '${copy}'`,
    'COMMIT;',
  ];
  const result = await runCli(config, args, signal);
  if (result.code !== 0) throw cliError(result, 'the online backup', source);
}

/**
 * The dump: an online backup into a private temp directory, then the copy streamed. The backup API needs a
 * seekable database file as its destination, so the temp copy cannot be avoided; it is removed in every case
 * (success, failure, abort, a consumer that stops reading).
 */
async function* dumpOutput(config: SqliteSourceConfig, source: string, signal: AbortSignal): AsyncGenerator<Buffer> {
  const dir = await mkdtemp(path.join(config.tempDirectory ?? tmpdir(), 'holdfast-sqlite-'));
  try {
    await chmod(dir, 0o700);
    const copy = path.join(dir, 'backup.sqlite');
    await backupTo(config, source, copy, signal);
    for await (const chunk of createReadStream(copy, { highWaterMark: 1024 * 1024 })) {
      if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'the dump was aborted');
      yield chunk as Buffer;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Starts the dump; resolves once the copy is made and its first byte is ready, so every failure rejects here. */
export function startDump(config: SqliteSourceConfig, source: string, signal: AbortSignal, engineVersion: string): Promise<DumpHandle> {
  return toDumpHandle(dumpOutput(config, source, signal), { origin: ORIGIN, signal, databases: [source], engineVersion, extension: '.sqlite' });
}
