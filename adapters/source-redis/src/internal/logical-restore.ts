import type { ChainableCommander, Redis } from 'ioredis';
import type { Readable } from 'node:stream';
import { AdapterError, type RestoreResult, type RestoreTarget, type SshTarget } from '@holdfast/sdk';
import type { RedisSourceConfig } from '../config.js';
import { connectionError, openClient, ORIGIN } from './connection.js';
import { FrameReader, type KeyRecord } from './logical-format.js';

/** Keys per RESTORE pipeline; also flushed early past this many payload bytes, so memory stays bounded. */
const BATCH_BYTES = 16 * 1024 * 1024;

/** The database index a section restores into: its mapping, else `target.database`, else its own index. */
export function targetIndex(db: number, target: RestoreTarget): number {
  const chosen = target.databaseMapping?.[String(db)] ?? target.database ?? String(db);
  const index = Number(chosen);
  if (!/^\d+$/.test(String(chosen)) || index > 1023) {
    throw new AdapterError(ORIGIN, 'CONFIG', `restore target "${String(chosen)}" is not a Redis database index (0, 1, 2, ...)`);
  }
  return index;
}

/** Restores a logical stream with `RESTORE key ttl payload REPLACE [ABSTTL]`, keeping each key's expiry time. */
export async function logicalRestore(
  config: RedisSourceConfig,
  stream: Readable,
  target: RestoreTarget,
  signal: AbortSignal,
  ssh?: SshTarget,
): Promise<RestoreResult> {
  const reader = new FrameReader();
  let client: Redis | undefined;
  let db = -1;
  let batch: { pipeline: ChainableCommander; keys: Buffer[]; bytes: number } | undefined;
  let isFinished = false;
  let expired = 0;
  const onAbort = () => client?.disconnect();
  signal.addEventListener('abort', onAbort, { once: true });

  const flush = async () => {
    if (!batch || batch.keys.length === 0) return;
    const { pipeline, keys } = batch;
    batch = undefined;
    const results = (await pipeline.exec()) ?? [];
    const failed = results.findIndex(([error]) => error);
    if (failed !== -1) {
      const message = String(results[failed]![0]?.message);
      const code = /payload version or checksum/i.test(message) ? 'CONFIG' : 'TRANSIENT';
      throw new AdapterError(ORIGIN, code, `RESTORE of key ${JSON.stringify(keys[failed]!.toString('utf8').slice(0, 200))} into database ${db} failed: ${message}`);
    }
  };
  const add = (record: KeyRecord) => {
    if (!client) throw new AdapterError(ORIGIN, 'CONFIG', 'corrupt logical stream: a key before any database section');
    // A key whose expiry has passed would be dropped by Redis at once; it is counted instead of sent.
    if (record.expireAt !== -1 && record.expireAt <= Date.now()) return void expired++;
    batch ??= { pipeline: client.pipeline(), keys: [], bytes: 0 };
    if (record.expireAt === -1) batch.pipeline.restore(record.key, 0, record.payload, 'REPLACE');
    else batch.pipeline.restore(record.key, record.expireAt, record.payload, 'REPLACE', 'ABSTTL');
    batch.keys.push(record.key);
    batch.bytes += record.payload.length;
  };

  try {
    for await (const chunk of stream) {
      for (const frame of reader.push(chunk as Buffer)) {
        if (frame.type === 'D') {
          await flush();
          client?.disconnect();
          db = targetIndex(Number(frame.json.db), target);
          client = await openClient(config, db, ssh);
        } else if (frame.type === 'K') {
          add(frame.record);
        } else if (frame.type === 'Z') {
          isFinished = true;
        }
      }
      if (batch && (batch.keys.length >= config.scanCount || batch.bytes >= BATCH_BYTES)) await flush();
    }
    await flush();
  } catch (error) {
    if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'the restore was aborted');
    if (error instanceof AdapterError) throw error;
    if (error instanceof Error && /logical stream/.test(error.message)) throw new AdapterError(ORIGIN, 'CONFIG', error.message);
    throw connectionError(error, config, db);
  } finally {
    signal.removeEventListener('abort', onAbort);
    client?.disconnect();
  }
  if (!isFinished || reader.pendingBytes > 0) throw new AdapterError(ORIGIN, 'CONFIG', 'the logical Redis backup is truncated (no end marker)');
  return { warnings: expired > 0 ? [`${expired} key(s) had expired since the backup and were not restored`] : [] };
}
