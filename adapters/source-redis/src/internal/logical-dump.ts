import type { Redis } from 'ioredis';
import { AdapterError, type SourceVersion, type SshTarget } from '@holdfast/sdk';
import type { RedisSourceConfig } from '../config.js';
import { connectionError, openClient, ORIGIN } from './connection.js';
import { encodeJson, encodeKey, encodePreamble } from './logical-format.js';

/** One SCAN batch as key frames: PTTL and DUMP of every key, pipelined. Keys gone meanwhile are left out. */
async function batchFrames(client: Redis, keys: Buffer[]): Promise<{ frames: Buffer; count: number }> {
  const pipeline = client.pipeline();
  for (const key of keys) pipeline.pttl(key).dumpBuffer(key);
  // PTTL is relative; anchoring it before the round trip makes a restored key expire at most one RTT early.
  const before = Date.now();
  const results = (await pipeline.exec()) ?? [];
  const frames: Buffer[] = [];
  for (let i = 0; i < keys.length; i++) {
    const [ttlError, ttl] = results[2 * i]!;
    const [dumpError, payload] = results[2 * i + 1]!;
    if (ttlError ?? dumpError) throw ttlError ?? dumpError;
    // -2 or a null DUMP: the key expired or was deleted between SCAN and DUMP.
    if (ttl === -2 || payload === null) continue;
    const expireAt = (ttl as number) >= 0 ? before + (ttl as number) : -1;
    frames.push(encodeKey({ key: keys[i]!, expireAt, payload: payload as Buffer }));
  }
  return { frames: Buffer.concat(frames), count: frames.length };
}

/**
 * The logical dump of `databases`: SCAN walks each database in batches, so memory stays flat. Not a point-in-time
 * snapshot across keys (each key is read atomically); the RDB mode is, for the whole server.
 */
export async function* logicalDump(
  config: RedisSourceConfig,
  databases: number[],
  server: SourceVersion,
  signal: AbortSignal,
  ssh?: SshTarget,
): AsyncGenerator<Buffer> {
  yield Buffer.concat([
    encodePreamble(),
    encodeJson('H', { format: 'holdfast-redis-logical', version: 1, server, createdAt: new Date().toISOString() }),
  ]);
  let keys = 0;
  for (const db of databases) {
    const client = await openClient(config, db, ssh);
    // Disconnecting makes a pending SCAN or pipeline reject at once, so an abort never waits on the server.
    const onAbort = () => client.disconnect();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      yield encodeJson('D', { db });
      let cursor = '0';
      do {
        if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'the dump was aborted');
        const [next, batch] = await client.scanBuffer(cursor, 'COUNT', config.scanCount);
        cursor = next.toString();
        if (batch.length === 0) continue;
        const { frames, count } = await batchFrames(client, batch);
        keys += count;
        if (frames.length > 0) yield frames;
      } while (cursor !== '0');
    } catch (error) {
      if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'the dump was aborted');
      throw error instanceof AdapterError ? error : connectionError(error, config, db);
    } finally {
      signal.removeEventListener('abort', onAbort);
      client.disconnect();
    }
  }
  yield encodeJson('Z', { keys, databases });
}
