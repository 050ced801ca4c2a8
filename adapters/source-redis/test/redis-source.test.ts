import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type SourceAdapter } from '@holdfast/sdk';
import { listChildProcesses, waitForNoNewChildren } from '@holdfast/testkit';
import definition from '../src/index.js';
import { compareSnapshots, flush, seed, server, snapshot, snapshotServedFromRdb, withDb } from './helpers.js';

// Indexes of this file (the conformance file uses 10 and 11).
const SEEDED = 12;
const TARGET = 13;
const SECOND = 14;
const SECOND_TARGET = 15;
const USER = `hf_redis_${randomBytes(4).toString('hex')}`;
const PASSWORD = `Pw-${randomBytes(8).toString('hex')}`;
const MINIMAL_ACL = '+scan +pttl +dump +restore +select +info +ping +client|setname +sync +psync +replconf';

function source(overrides: Record<string, unknown> = {}): SourceAdapter {
  return instantiateAdapter(container, definition, { ...server, database: SEEDED, ...overrides });
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(stream, new Writable({ write: (chunk: Buffer, _e, cb) => (chunks.push(chunk), cb()) }));
  return Buffer.concat(chunks);
}

const signal = () => new AbortController().signal;

beforeAll(async () => {
  await flush(SEEDED, TARGET, SECOND, SECOND_TARGET);
  await seed(SEEDED);
  // The least rights the README lists, so the documented ACL is proven, not guessed.
  await withDb(SEEDED, (redis) =>
    redis.call('ACL', 'SETUSER', USER, 'on', `>${PASSWORD}`, '~*', '&*', ...MINIMAL_ACL.split(' ')),
  );
});

afterAll(async () => {
  await flush(SEEDED, TARGET, SECOND, SECOND_TARGET);
  await withDb(SEEDED, (redis) => redis.call('ACL', 'DELUSER', USER));
});

describe('source-redis against the local Redis', () => {
  it('detects Redis and its version, and lists the databases holding keys', async () => {
    const adapter = source();
    const info = await withDb(SEEDED, (redis) => redis.info('server'));
    expect(await adapter.detectVersion()).toEqual({ version: /redis_version:(\S+)/.exec(info)![1], edition: 'Redis' });
    expect(await adapter.listDatabases()).toContain(String(SEEDED));
    expect((await adapter.check()).message).toMatch(/^Connected to Redis 7\./);
  });

  it('logical mode round-trips every type and TTL as an ACL user, key by key', async () => {
    const adapter = source({ username: USER, password: PASSWORD });
    const dump = await adapter.dump({ databases: [], signal: signal() });
    expect(dump.extension).toBe('.hfredis');
    const bytes = await collect(dump.stream);
    expect(bytes.subarray(0, 9)).toEqual(Buffer.from('HFREDIS\n\x01', 'latin1'));
    expect((await dump.done).bytes).toBe(bytes.length);
    // Small pieces prove the frame reader copes with frames split across reads.
    const pieces = Array.from({ length: Math.ceil(bytes.length / 1000) }, (_, i) => bytes.subarray(i * 1000, (i + 1) * 1000));
    const result = await adapter.restore(Readable.from(pieces), { target: { database: String(TARGET) }, signal: signal() });
    expect(result.warnings).toEqual([]);
    const expected = await snapshot(SEEDED);
    expect(new Set([...expected.values()].map((entry) => entry.type))).toEqual(new Set(['string', 'list', 'set', 'zset', 'hash', 'stream']));
    expect([...expected.values()].filter((entry) => entry.expireAt > 0).length).toBeGreaterThan(100);
    expect(compareSnapshots(await snapshot(TARGET), expected)).toEqual([]);
  });

  it('logical mode: several databases restore through a mapping; keys expired since the backup are reported', async () => {
    await withDb(SECOND, async (redis) => {
      await redis.set('second:a', '1');
      await redis.set('second:soon', 'gone', 'PX', 1000);
    });
    const setAt = Date.now();
    const adapter = source();
    // SECOND first, so its short-lived key is dumped long before it expires.
    const dump = await adapter.dump({ databases: [String(SECOND), String(SEEDED)], signal: signal() });
    const bytes = await collect(dump.stream);
    expect((await dump.done).databases).toEqual([String(SECOND), String(SEEDED)]);
    expect(bytes.includes(Buffer.from('second:soon'))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, setAt + 1100 - Date.now())));
    await flush(TARGET);
    const result = await adapter.restore(Readable.from([bytes]), {
      target: { databaseMapping: { [SEEDED]: String(TARGET), [SECOND]: String(SECOND_TARGET) } },
      signal: signal(),
    });
    expect(result.warnings).toEqual(['1 key(s) had expired since the backup and were not restored']);
    expect(compareSnapshots(await snapshot(TARGET), await snapshot(SEEDED))).toEqual([]);
    expect(await withDb(SECOND_TARGET, (redis) => redis.keys('*'))).toEqual(['second:a']);
  });

  it('logical mode: a truncated stream fails the restore with CONFIG', async () => {
    const dump = await source().dump({ databases: [], signal: signal() });
    const bytes = await collect(dump.stream);
    const error = await source()
      .restore(Readable.from([bytes.subarray(0, bytes.length - 10)]), { target: { database: String(SECOND_TARGET) }, signal: signal() })
      .catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toMatch(/truncated/);
  });

  it('rdb mode gives a valid RDB (redis-check-rdb) that a server started on it serves key by key; restore refuses it', async () => {
    const adapter = source({ mode: 'rdb', username: USER, password: PASSWORD });
    const dump = await adapter.dump({ databases: [], signal: signal() });
    expect(dump.extension).toBe('.rdb');
    // The password never reaches a command line (redis-cli gets it through REDISCLI_AUTH).
    const commandLines = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
    expect(commandLines).toMatch(/redis-cli -h 127\.0\.0\.1 -p 6379 --no-auth-warning --user hf_redis_\w+ --rdb -/);
    expect(commandLines).not.toContain(PASSWORD);
    const bytes = await collect(dump.stream);
    expect((await dump.done).bytes).toBe(bytes.length);
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('REDIS');

    const dir = await mkdtemp(join(tmpdir(), 'hf-redis-rdb-'));
    try {
      await writeFile(join(dir, 'dump.rdb'), bytes);
      expect(execFileSync('redis-check-rdb', [join(dir, 'dump.rdb')], { encoding: 'utf8' })).toMatch(/RDB looks OK/);
      // "Stop the server, place the file": a second server started on the file serves the same keys.
      expect(compareSnapshots(await snapshotServedFromRdb(dir, SEEDED), await snapshot(SEEDED))).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const error = await adapter.restore(Readable.from([bytes]), { target: { database: String(TARGET) }, signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('UNSUPPORTED');
    expect((error as Error).message).toMatch(/^\[source-redis\] an RDB snapshot cannot be restored into a running server: stop the server/);
  });

  it('a wrong password rejects the dump before its first byte with AUTH, without the secret', async () => {
    for (const mode of ['logical', 'rdb']) {
      const adapter = source({ mode, username: USER, password: `${PASSWORD}-wrong` });
      const error = await adapter.dump({ databases: [], signal: signal() }).catch((e: unknown) => e);
      expect(isAdapterError(error) && error.code).toBe('AUTH');
      expect((error as Error).message).toMatch(new RegExp(`^\\[source-redis\\] cannot log in to 127\\.0\\.0\\.1:6379 as ${USER}: WRONGPASS`));
      expect((error as Error).message).not.toContain(PASSWORD);
      const health = await adapter.check();
      expect(health.ok).toBe(false);
      expect(health.message).not.toContain(PASSWORD);
    }
  });

  it('an unreachable server rejects the dump with TRANSIENT naming the address', async () => {
    const error = await source({ port: 1, connectTimeoutSeconds: 2 }).dump({ databases: [], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('TRANSIENT');
    expect((error as Error).message).toMatch(/cannot connect to 127\.0\.0\.1:1: .*ECONNREFUSED/);
  });

  it('rdb mode without redis-cli rejects the dump with CONFIG naming the tool', async () => {
    const error = await source({ mode: 'rdb', binDirectory: '/nonexistent/holdfast-bin' }).dump({ databases: [], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toMatch(/redis-cli was not found in \/nonexistent\/holdfast-bin/);
  });

  it('an unknown database index rejects the dump with NOT_FOUND naming it; a non-index with CONFIG', async () => {
    const error = await source().dump({ databases: ['999'], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('NOT_FOUND');
    expect((error as Error).message).toMatch(/^\[source-redis\] database 999 does not exist on 127\.0\.0\.1:6379/);
    await expect(source().dump({ databases: ['users'], signal: signal() })).rejects.toThrow(/"users" is not a Redis database index/);
  });

  it('aborting an rdb dump mid-stream rejects done with ABORTED and leaves no redis-cli behind', async () => {
    const before = await listChildProcesses();
    const controller = new AbortController();
    const dump = await source({ mode: 'rdb' }).dump({ databases: [], signal: controller.signal });
    dump.stream.on('error', () => undefined);
    expect((await listChildProcesses()).length).toBeGreaterThan(before.length);
    controller.abort();
    await expect(dump.done).rejects.toSatisfy((e: unknown) => isAdapterError(e) && e.code === 'ABORTED');
    expect(await waitForNoNewChildren(before)).toEqual([]);
  });
});
