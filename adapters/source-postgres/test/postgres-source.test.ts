import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type SourceAdapter } from '@holdfast/sdk';
import definition from '../src/index.js';
import { compressionArgs } from '../src/internal/dump.js';
import { checksums, childCommands, createDatabase, dropDatabase, seed, server, sql } from './helpers.js';

const created: string[] = [];
async function database(label: string): Promise<string> {
  const name = await createDatabase(label);
  created.push(name);
  return name;
}

function source(overrides: Record<string, unknown> = {}): SourceAdapter {
  return instantiateAdapter(container, definition, { ...server, ...overrides });
}

/** Collects a dump into memory; only for the small test databases here. */
async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(stream, new Writable({ write: (chunk, _e, cb) => (chunks.push(chunk), cb()) }));
  return Buffer.concat(chunks);
}

afterAll(async () => {
  await Promise.all(created.map(dropDatabase));
});

describe('source-postgres against the local PostgreSQL', () => {
  let seeded: string;
  let expected: Record<string, string>;

  beforeAll(async () => {
    seeded = await database('seed');
    expected = await seed(seeded, 5000);
  });

  it('checks the connection and detects the server version', async () => {
    const adapter = source();
    const health = await adapter.check();
    expect(health.ok).toBe(true);
    const [row] = await sql<{ v: string }>('postgres', `SELECT current_setting('server_version') AS v`);
    expect((await adapter.detectVersion()).version).toBe(row!.v.split(' ')[0]);
    expect(await adapter.listDatabases()).toContain(seeded);
  });

  it('dumps one database and restores it into a new database with the same rows', async () => {
    const adapter = source();
    const dump = await adapter.dump({ databases: [seeded], signal: new AbortController().signal });
    expect(dump.extension).toBe('.dump');
    const bytes = await collect(dump.stream);
    const stats = await dump.done;
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('PGDMP');
    expect(stats.bytes).toBe(bytes.length);
    expect(stats.databases).toEqual([seeded]);

    const target = `${seeded}_restored`;
    created.push(target);
    await adapter.restore(Readable.from([bytes]), { target: { database: target }, signal: new AbortController().signal });
    expect(await checksums(target)).toEqual(expected);
  });

  it('dumps several databases into one multi-dump and restores each through a name mapping', async () => {
    const second = await database('second');
    const secondExpected = await seed(second, 120);
    const adapter = source({ password: '' });
    const dump = await adapter.dump({ databases: [seeded, second], signal: new AbortController().signal, engineOptions: { pgCompression: '0' } });
    expect(dump.extension).toBe('.pgdumps');
    const bytes = await collect(dump.stream);
    expect((await dump.done).bytes).toBe(bytes.length);

    const mapping = { [seeded]: `${seeded}_m1`, [second]: `${second}_m2` };
    created.push(...Object.values(mapping));
    // Small chunks prove the frame reader copes with frames split across reads.
    const pieces = Array.from({ length: Math.ceil(bytes.length / 777) }, (_, i) => bytes.subarray(i * 777, (i + 1) * 777));
    await adapter.restore(Readable.from(pieces), { target: { databaseMapping: mapping }, signal: new AbortController().signal });
    expect(await checksums(mapping[seeded]!)).toEqual(expected);
    expect(await checksums(mapping[second]!)).toEqual(secondExpected);
  });

  it('fails the restore of a truncated multi-dump with a clear error', async () => {
    const second = await database('trunc');
    await seed(second, 10);
    const adapter = source();
    const dump = await adapter.dump({ databases: [seeded, second], signal: new AbortController().signal });
    const bytes = await collect(dump.stream);
    const target = `${second}_t`;
    created.push(`${seeded}_t`, target);
    await expect(
      adapter.restore(Readable.from([bytes.subarray(0, bytes.length - 20)]), {
        target: { databaseMapping: { [seeded]: `${seeded}_t`, [second]: target } },
        signal: new AbortController().signal,
      }),
    ).rejects.toThrow(/truncated/);
  });

  it('a wrong password fails the dump before its first byte, naming the cause without the secret', async () => {
    // trust auth on 127.0.0.1 accepts any password, so the failing case uses a role that does not exist.
    const adapter = source({ user: 'hf_no_such_role', password: 'S3cret-Value-42' });
    const error = await adapter.dump({ databases: [seeded], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(error)).toBe(true);
    expect((error as Error).message).toMatch(/^\[source-postgres\] cannot connect to 127\.0\.0\.1:5432 as hf_no_such_role: .*does not exist/);
    expect((error as Error).message).not.toContain('S3cret-Value-42');
    const health = await adapter.check();
    expect(health.ok).toBe(false);
    expect(health.message).not.toContain('S3cret-Value-42');
  });

  it('an unreachable server fails the dump before any byte with a TRANSIENT error', async () => {
    const adapter = source({ port: 1, connectTimeoutSeconds: 2 });
    const error = await adapter.dump({ databases: ['x'], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect((error as { code?: string }).code).toBe('TRANSIENT');
  });

  it('a missing pg_dump rejects the dump before any byte with CONFIG naming the tool', async () => {
    const error = await source({ binDirectory: '/nonexistent/holdfast-bin' }).dump({ databases: [seeded], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(error) && (error as { code: string }).code).toBe('CONFIG');
    expect((error as Error).message).toMatch(/\/nonexistent\/holdfast-bin\/(pg_dump|psql) was not found/);
    expect((await childCommands()).filter((c) => c.includes('pg_dump'))).toEqual([]);
  });

  it('an unknown database rejects the dump before any byte with NOT_FOUND naming it', async () => {
    const error = await source().dump({ databases: [seeded, 'hf_no_such_db'], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(error) && (error as { code: string }).code).toBe('NOT_FOUND');
    expect((error as Error).message).toBe('[source-postgres] unknown database "hf_no_such_db" on 127.0.0.1:5432');
    expect((await childCommands()).filter((c) => c.includes('pg_dump'))).toEqual([]);
  });

  it('aborting mid-dump errors the stream and leaves no pg_dump process behind', async () => {
    const big = await database('big');
    await sql(big, `CREATE TABLE blob AS SELECT g AS id, repeat(md5(g::text), 40) AS body FROM generate_series(1, 200000) g`);
    const controller = new AbortController();
    const dump = await source().dump({ databases: [big], signal: controller.signal, engineOptions: { pgCompression: '0' } });
    const slow = new PassThrough({ highWaterMark: 1024 });
    const drained = pipeline(dump.stream, slow, new Writable({ highWaterMark: 1024, write: (_c, _e, cb) => setTimeout(cb, 5) }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    await expect(drained).rejects.toBeTruthy();
    await expect(dump.done).rejects.toSatisfy((e: unknown) => isAdapterError(e) && (e as { code: string }).code === 'ABORTED');
    for (let i = 0; i < 50 && (await childCommands()).some((c) => c.includes('pg_dump')); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await childCommands()).filter((c) => c.includes('pg_dump'))).toEqual([]);
  });

  it('a pg_dump that dies midway errors the stream instead of ending it', async () => {
    const big = await database('killed');
    await sql(big, `CREATE TABLE blob AS SELECT g AS id, repeat(md5(g::text), 40) AS body FROM generate_series(1, 200000) g`);
    const dump = await source().dump({ databases: [big], signal: new AbortController().signal, engineOptions: { pgCompression: '0' } });
    const consumed = pipeline(dump.stream, new PassThrough({ highWaterMark: 1024 }), new Writable({ write: (_c, _e, cb) => setTimeout(cb, 1) }));
    // Terminating pg_dump's server session makes the tool exit non-zero after it produced bytes.
    await sql('postgres', `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'holdfast'`, [big]);
    const outcome = await Promise.allSettled([dump.done, consumed]);
    expect(outcome[0].status).toBe('rejected');
    expect(outcome[1].status).toBe('rejected');
    expect(String((outcome[0] as PromiseRejectedResult).reason)).toMatch(/pg_dump of ".*" failed/);
  });

  it('with pgCompression empty, turns pg_dump compression off for ZSTD and GZIP jobs only; the -Z0 dump restores the same rows', async () => {
    expect(compressionArgs('', 'ZSTD')).toEqual(['--compress', '0']);
    expect(compressionArgs(undefined, 'ZSTD')).toEqual(['--compress', '0']);
    expect(compressionArgs('', 'GZIP')).toEqual(['--compress', '0']);
    for (const codec of ['NONE', 'BROTLI', undefined]) expect(compressionArgs('', codec)).toEqual([]);
    // An explicit level always wins, whatever the job's codec.
    expect(compressionArgs('6', 'ZSTD')).toEqual(['--compress', '6']);
    const adapter = source();
    const dumpWith = async (engineOptions: Record<string, unknown>) => {
      const dump = await adapter.dump({ databases: [seeded], signal: new AbortController().signal, engineOptions });
      const bytes = await collect(dump.stream);
      await dump.done;
      return bytes;
    };
    const zstdJob = await dumpWith({ pgCompression: '', engineCompression: 'ZSTD' });
    const brotliJob = await dumpWith({ pgCompression: '', engineCompression: 'BROTLI' });
    expect(zstdJob.subarray(0, 5).toString('latin1')).toBe('PGDMP');
    // pg_dump's zlib shrinks the seeded rows: the uncompressed dump is clearly larger.
    expect(zstdJob.length).toBeGreaterThan(brotliJob.length * 1.5);
    const target = `${seeded}_z0`;
    created.push(target);
    await adapter.restore(Readable.from([zstdJob]), { target: { database: target }, signal: new AbortController().signal });
    expect(await checksums(target)).toEqual(expected);
  });

  it('rejects a pgCompression that is not a level', async () => {
    await expect(
      source().dump({ databases: [seeded], signal: new AbortController().signal, engineOptions: { pgCompression: 'zstd:99' } }),
    ).rejects.toThrow(/pgCompression must be a level from 0 to 9/);
  });
});
