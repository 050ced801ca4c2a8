import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { Redis } from 'ioredis';

/** The local Redis, as the launcher recorded it. Others share it: this package uses indexes 3, 4, 7, 8 and 10-15 only (5 and 6 are the engine's test restores, 9 is the bench's). */
const state = JSON.parse(readFileSync('/tmp/holdfast-test-services/redis/redis.json', 'utf8')) as { host: string; port: number };
export const server = { host: state.host, port: state.port };

/** A client on one of our database indexes. */
export function client(db: number): Redis {
  if (!(db === 3 || db === 4 || db === 7 || db === 8 || (db >= 10 && db <= 15))) throw new Error(`source-redis tests use database indexes 3, 4, 7, 8 and 10-15 only, not ${db}`);
  return new Redis({ ...server, db, lazyConnect: false });
}

/** Runs `work` with a client on `db`. */
export async function withDb<T>(db: number, work: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = client(db);
  try {
    return await work(redis);
  } finally {
    redis.disconnect();
  }
}

/** Empties our database indexes (never FLUSHALL: other test files use other indexes). */
export async function flush(...dbs: number[]): Promise<void> {
  for (const db of dbs) await withDb(db, (redis) => redis.flushdb());
}

/**
 * Seeds every type, with and without TTLs, binary keys and values. `bulkKeys` strings of ~600 bytes each make the
 * dump big enough for the abort check (2000 = ~1.2 MiB).
 */
export async function seed(db: number, bulkKeys = 2000): Promise<void> {
  await withDb(db, async (redis) => {
    await redis.set('str:plain', 'hello naïve 東京');
    await redis.set(Buffer.from([0x62, 0x69, 0x6e, 0x00, 0xff, 0x0a]), randomBytes(300));
    await redis.set('str:ttl', 'short-lived', 'PX', 3_600_000);
    await redis.set('str:int', 12345);
    await redis.rpush('list:l', 'a', 'b', 'c', 'a', Buffer.from([0, 1, 2]));
    await redis.pexpire('list:l', 7_200_000);
    await redis.sadd('set:s', 'x', 'y', 'z', '1', '2');
    await redis.zadd('zset:z', 1.5, 'one', -2, 'minus two', 1e10, 'big');
    await redis.hset('hash:h', { field: 'value', other: 'naïve', empty: '' });
    await redis.pexpire('hash:h', 86_400_000);
    // A big hash and list take the non-listpack encodings too.
    await redis.hset('hash:big', Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`f${i}`, `v${i}-${'x'.repeat(80)}`])));
    await redis.rpush('list:big', ...Array.from({ length: 600 }, (_, i) => `item-${i}`));
    for (let i = 0; i < 5; i++) await redis.xadd('stream:s', '*', 'n', String(i), 'payload', `p${i}`);
    await redis.xgroup('CREATE', 'stream:s', 'workers', '0');
    await redis.xreadgroup('GROUP', 'workers', 'alice', 'COUNT', 2, 'STREAMS', 'stream:s', '>');
    const pipeline = redis.pipeline();
    for (let i = 0; i < bulkKeys; i++) {
      const value = randomBytes(300).toString('hex');
      if (i % 10 === 0) pipeline.set(`bulk:${i}`, value, 'PX', 600_000 + i);
      else pipeline.set(`bulk:${i}`, value);
    }
    await pipeline.exec();
  });
}

/** One key's type, value (read per type, not through DUMP) and absolute expiry. */
export interface KeySnapshot {
  type: string;
  value: unknown;
  expireAt: number;
}

/** Every key of `db`, read back type by type: compared key by key after a restore. */
export async function snapshot(db: number): Promise<Map<string, KeySnapshot>> {
  return withDb(db, snapshotOf);
}

/** {@link snapshot} through any client (for instance one on a second server started from an RDB file). */
export async function snapshotOf(redis: Redis): Promise<Map<string, KeySnapshot>> {
  {
    const result = new Map<string, KeySnapshot>();
    const keys = (await redis.keysBuffer('*')) as Buffer[];
    for (const key of keys) {
      const type = await redis.type(key);
      const expireAt = Number(await redis.call('PEXPIRETIME', key));
      let value: unknown;
      if (type === 'string') value = ((await redis.getBuffer(key)) as Buffer).toString('hex');
      else if (type === 'list') value = ((await redis.lrangeBuffer(key, 0, -1)) as Buffer[]).map((b) => b.toString('hex'));
      else if (type === 'set') value = (await redis.smembers(key)).sort();
      else if (type === 'zset') value = await redis.zrange(key, 0, -1, 'WITHSCORES');
      else if (type === 'hash') value = Object.entries(await redis.hgetall(key)).sort(([a], [b]) => a.localeCompare(b));
      else if (type === 'stream') value = { entries: await redis.xrange(key, '-', '+'), groups: await redis.xinfo('GROUPS', key) };
      else throw new Error(`unexpected type ${type}`);
      result.set(key.toString('hex'), { type, value, expireAt });
    }
    return result;
  }
}

/** Compares two snapshots key by key; expiry times may differ by the dump's round-trip time (< 2 s). */
export function compareSnapshots(actual: Map<string, KeySnapshot>, expected: Map<string, KeySnapshot>): string[] {
  const problems: string[] = [];
  for (const [key, want] of expected) {
    const got = actual.get(key);
    if (!got) problems.push(`missing key ${Buffer.from(key, 'hex').toString('utf8')}`);
    else if (got.type !== want.type) problems.push(`${key}: type ${got.type} != ${want.type}`);
    else if (JSON.stringify(got.value) !== JSON.stringify(want.value)) problems.push(`${key}: value differs`);
    else if ((want.expireAt < 0) !== (got.expireAt < 0) || Math.abs(got.expireAt - want.expireAt) > 2000) {
      problems.push(`${key}: expiry ${got.expireAt} != ${want.expireAt}`);
    }
  }
  for (const key of actual.keys()) if (!expected.has(key)) problems.push(`unexpected key ${key}`);
  return problems;
}

async function freePort(): Promise<number> {
  const probe = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => probe.once('listening', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * "Stop the server, place the file": starts a second redis-server on `dir/dump.rdb` and snapshots database `db` as
 * that server serves it, key by key (values per type and absolute expiry). The server is killed afterwards.
 */
export async function snapshotServedFromRdb(dir: string, db: number): Promise<Map<string, KeySnapshot>> {
  const port = await freePort();
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--dbfilename', 'dump.rdb', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const restored = new Redis({ host: '127.0.0.1', port, db, retryStrategy: (n) => (n > 100 ? null : 100) });
  restored.on('error', () => undefined); // refused connects while the server loads the file; ping() waits
  try {
    await restored.ping();
    return await snapshotOf(restored);
  } finally {
    restored.disconnect();
    server.kill('SIGKILL');
  }
}
