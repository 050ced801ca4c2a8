import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { once } from 'node:events';
import { AdapterError, type RestoreResult, type RestoreTarget, type SshTarget } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../config.js';
import { ORIGIN, connectionArgs, quoteIdentifier, scrub, withClient } from './connection.js';
import { FrameReader, isMultiDump, MULTI_MAGIC } from './multi-dump-format.js';
import { quoteLiteral, remoteQuery } from './remote-query.js';
import { startTool } from './tool-process.js';

/** Creates the target database when it does not exist yet. */
async function ensureDatabase(config: PostgresSourceConfig, ssh: SshTarget | undefined, database: string): Promise<void> {
  if (ssh) {
    const found = await remoteQuery(config, ssh, config.maintenanceDatabase, `SELECT 1 FROM pg_database WHERE datname = ${quoteLiteral(database)}`);
    if (found.length === 0) await remoteQuery(config, ssh, config.maintenanceDatabase, `CREATE DATABASE ${quoteIdentifier(database)}`);
    return;
  }
  await withClient(config, config.maintenanceDatabase, async (client) => {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${quoteIdentifier(database)}`);
  });
}

/** Feeds one `pg_dump -Fc` stream into `pg_restore` on `database`; rejects when pg_restore reports errors. */
async function restoreOne(config: PostgresSourceConfig, ssh: SshTarget | undefined, input: Readable, database: string, signal: AbortSignal): Promise<void> {
  await ensureDatabase(config, ssh, database);
  const args = ['--clean', '--if-exists', '--no-owner', '--no-privileges', ...connectionArgs(config, database)];
  const tool = await startTool(config, ssh, 'pg_restore', args, signal);
  tool.stdout.resume();
  try {
    await pipeline(input, tool.stdin, { signal });
    const code = await tool.exited;
    if (code !== 0) {
      throw new AdapterError(ORIGIN, 'TRANSIENT', `pg_restore into "${database}" failed (exit ${String(code)}): ${scrub(tool.stderrTail(), config)}`);
    }
  } catch (error) {
    if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', `restore into "${database}" was aborted`);
    if (error instanceof AdapterError) throw error;
    const detail = tool.stderrTail() || (error instanceof Error ? error.message : String(error));
    throw new AdapterError(ORIGIN, 'TRANSIENT', `pg_restore into "${database}" failed: ${scrub(detail, config)}`, { cause: error });
  } finally {
    await tool.stop();
  }
}

/**
 * Reads enough of the stream to tell a plain dump from a multi-dump and returns the head together with a stream of
 * the whole input (head included). Iterating by hand, rather than breaking out of `for await`, keeps the source open.
 */
async function splitHead(stream: Readable): Promise<{ head: Buffer; whole: Readable }> {
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const headChunks: Buffer[] = [];
  let length = 0;
  while (length < MULTI_MAGIC.length) {
    const next = await iterator.next();
    if (next.done) break;
    headChunks.push(next.value);
    length += next.value.length;
  }
  const whole = Readable.from(
    (async function* replay() {
      yield* headChunks;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value;
      }
    })(),
  );
  return { head: Buffer.concat(headChunks), whole };
}

/** Restores a plain dump into `target.database`, or every database of a multi-dump through `databaseMapping`. */
export async function restoreDump(
  config: PostgresSourceConfig,
  ssh: SshTarget | undefined,
  stream: Readable,
  target: RestoreTarget,
  signal: AbortSignal,
): Promise<RestoreResult> {
  const { head, whole } = await splitHead(stream);
  if (head.length === 0) throw new AdapterError(ORIGIN, 'CONFIG', 'the backup is empty: nothing to restore');
  if (!isMultiDump(head)) {
    const database = target.database ?? Object.values(target.databaseMapping ?? {})[0];
    if (!database) throw new AdapterError(ORIGIN, 'CONFIG', 'restore needs a target database name');
    await restoreOne(config, ssh, whole, database, signal);
    return { warnings: [] };
  }
  await restoreFrames(config, ssh, whole, target, signal);
  return { warnings: [] };
}

/** Splits a multi-dump into its databases and restores them one after another. */
async function restoreFrames(config: PostgresSourceConfig, ssh: SshTarget | undefined, input: Readable, target: RestoreTarget, signal: AbortSignal): Promise<void> {
  const reader = new FrameReader();
  let current: { body: PassThrough; restoring: Promise<void> } | undefined;
  let finished = false;
  for await (const chunk of input) {
    for (const frame of reader.push(chunk as Buffer)) {
      if (frame.type === 'D') {
        const { name } = JSON.parse(frame.payload.toString('utf8')) as { name: string };
        const database = target.databaseMapping?.[name] ?? name;
        const body = new PassThrough({ highWaterMark: 1024 * 1024 });
        current = { body, restoring: restoreOne(config, ssh, body, database, signal) };
        current.restoring.catch(() => undefined);
      } else if (frame.type === 'C') {
        if (!current) throw new AdapterError(ORIGIN, 'CONFIG', 'corrupt multi-dump: data before a database header');
        // Waiting on drain alone would hang if pg_restore died; its failure ends the wait too.
        if (!current.body.write(frame.payload)) await Promise.race([once(current.body, 'drain'), current.restoring]);
      } else if (frame.type === 'E') {
        current?.body.end();
        await current?.restoring;
        current = undefined;
      } else {
        finished = true;
      }
    }
  }
  if (!finished || reader.pendingBytes > 0) {
    current?.body.destroy();
    throw new AdapterError(ORIGIN, 'CONFIG', 'the multi-database dump is truncated (no end marker)');
  }
}
