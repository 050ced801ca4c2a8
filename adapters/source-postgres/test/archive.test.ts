import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, openMember, readIndex, resolveSnapshot, type Compression, type Snapshot, type SourceAdapter } from '@holdfast/sdk';
import { sshdState } from '@holdfast/tooling/harness/sshd';
import definition from '../src/index.js';
import { archiveCompressionArgs } from '../src/internal/archive-dump.js';
import { checksums, createDatabase, dropDatabase, seed, server, sql } from './helpers.js';
import { codeOf, dumpsOf, dumpToFile, fileRangeReader, noPgDumpLeft, pgDumps, request, restoreInput, sessionOn } from './archive-helpers.js';
import { collect, databaseExists, dropRolesRecreatedBy, roleNames } from './globals-helpers.js';

// Archive mode (docs/formats/archive.md) against the local PostgreSQL 15: one pg_dump -Fc member per database,
// read back by range reads of a file, restored through pg_restore and compared with the original rows.
const run = promisify(execFile);
const created: string[] = [];
const roles: string[] = [];
let dir: string;

async function database(label: string): Promise<string> {
  const name = await createDatabase(label);
  created.push(name);
  return name;
}

/** A restore target name, dropped after the tests. */
function targetName(base: string, suffix: string): string {
  const name = `${base}_${suffix}`;
  created.push(name);
  return name;
}

function source(overrides: Record<string, unknown> = {}): SourceAdapter {
  return instantiateAdapter(container, definition, { ...server, ...overrides });
}

const signal = () => new AbortController().signal;
const archiveDump = (adapter: SourceAdapter, databases: string[], compression: Compression) => dumpToFile(adapter, databases, compression, dir);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hf-pg-archive-'));
});

afterAll(async () => {
  await Promise.all(created.map(dropDatabase));
  for (const name of roles) await sql('postgres', `DROP ROLE IF EXISTS "${name}"`);
  await rm(dir, { recursive: true, force: true });
});

describe('source-postgres seekable archives against the local PostgreSQL', () => {
  let shop: string;
  let crm: string;
  let shopExpected: Record<string, string>;
  let crmExpected: Record<string, string>;

  beforeAll(async () => {
    shop = await database('arch_shop');
    shopExpected = await seed(shop, 3000);
    crm = await database('arch_crm');
    await sql(crm, `CREATE TABLE contacts (id int PRIMARY KEY, email text NOT NULL, score numeric(6,2))`);
    await sql(crm, `INSERT INTO contacts SELECT g, 'user' || g || '@example.org', g * 1.25 FROM generate_series(1, 1500) g`);
    await sql(crm, `CREATE TABLE events (id bigserial PRIMARY KEY, contact int REFERENCES contacts, detail jsonb)`);
    await sql(crm, `INSERT INTO events (contact, detail) SELECT 1 + g % 1500, jsonb_build_object('n', g, 'kind', 'visit') FROM generate_series(1, 4000) g`);
    crmExpected = await checksums(crm);
    expect(Object.keys(shopExpected)).toEqual(['items', 'notes']);
    expect(Object.keys(crmExpected)).toEqual(['contacts', 'events']);
  });

  it('declares seekable archives', () => {
    expect(definition.capabilities.seekableArchive).toBe(true);
  });

  it('turns pg_dump compression off in archive mode unless the job sets pgCompression', () => {
    for (const unset of [undefined, null, '']) expect(archiveCompressionArgs(unset)).toEqual(['--compress', '0']);
    expect(archiveCompressionArgs('6')).toEqual(['--compress', '6']);
    expect(() => archiveCompressionArgs('zstd:3')).toThrow(/pgCompression must be a level from 0 to 9/);
  });

  for (const compression of ['zstd', 'gzip'] as const) {
    it(`writes one ${compression} member per database, readable alone, and restores both through a mapping`, async () => {
      const adapter = source();
      const { path, size, stats, index, snapshot, extension } = await archiveDump(adapter, [shop, crm], compression);
      expect(extension).toBe('.hfa');
      expect(stats.bytes).toBe(size);
      expect(stats.databases).toEqual([shop, crm]);
      expect(stats.archive?.archiveSize).toBe(size);
      expect(stats.archive?.summary).toMatchObject({ databases: 2, globals: 0 });
      // The sidecar returned by done is the index stored in the archive.
      const indexFile = stats.archive!.indexFile;
      expect(await readIndex({ sidecar: Buffer.isBuffer(indexFile) ? indexFile : Buffer.concat([...indexFile.chunks()]) })).toEqual(index);
      expect(index.chain).toBeNull();
      expect(index.entries.map((entry) => [entry.kind, entry.database, entry.compression])).toEqual([
        ['database-dump', shop, compression],
        ['database-dump', crm, compression],
      ]);

      // One member alone, by one range read: a complete pg_dump -Fc of that database only, written with -Z0.
      const member = join(dir, `${compression}-crm.dump`);
      await pipeline(openMember(fileRangeReader(path), dumpsOf(index.entries)[1]!), createWriteStream(member));
      const { stdout: list } = await run('pg_restore', ['--list', member]);
      expect(list).toContain(`dbname: ${crm}`);
      expect(list).toContain('Compression: 0');
      expect(list).toMatch(/TABLE DATA public contacts/);
      expect(list).not.toMatch(/TABLE DATA public items/);
      // The members are compressed by the archive: the archive is smaller than the uncompressed dumps it holds.
      expect(size).toBeLessThan(stats.archive!.summary!.dumpBytes!);

      const mapping = { [shop]: targetName(shop, `${compression}_a`), [crm]: targetName(crm, `${compression}_b`) };
      const result = await adapter.restoreArchive!(restoreInput(path, snapshot), { target: { databaseMapping: mapping }, signal: signal() });
      expect(result.warnings).toEqual([]);
      expect(await checksums(mapping[shop]!)).toEqual(shopExpected);
      expect(await checksums(mapping[crm]!)).toEqual(crmExpected);
    });
  }

  describe('restoring part of an archive', () => {
    let path: string;
    let snapshot: Snapshot;

    beforeAll(async () => {
      ({ path, snapshot } = await archiveDump(source(), [shop, crm], 'zstd'));
    });

    it('include with one name restores only that database', async () => {
      const mapping = { [shop]: targetName(shop, 'inc_a'), [crm]: targetName(crm, 'inc_b') };
      await source().restoreArchive!(restoreInput(path, snapshot, [crm]), { target: { databaseMapping: mapping }, signal: signal() });
      expect(await checksums(mapping[crm]!)).toEqual(crmExpected);
      expect(await databaseExists(mapping[shop]!)).toBe(false);
    });

    it('target.database takes the one database include selects', async () => {
      const into = targetName(shop, 'single');
      await source().restoreArchive!(restoreInput(path, snapshot, [shop]), { target: { database: into }, signal: signal() });
      expect(await checksums(into)).toEqual(shopExpected);
    });

    it('an unknown name in include fails with CONFIG naming the databases the archive holds, before anything is written', async () => {
      const mapping = { [shop]: targetName(shop, 'unk_a'), [crm]: targetName(crm, 'unk_b') };
      const error = await source()
        .restoreArchive!(restoreInput(path, snapshot, [crm, 'hf_not_in_archive']), { target: { databaseMapping: mapping }, signal: signal() })
        .catch((e: unknown) => e);
      expect(codeOf(error)).toBe('CONFIG');
      expect((error as Error).message).toContain('"hf_not_in_archive"');
      expect((error as Error).message).toContain(`it holds the databases "${shop}", "${crm}"`);
      expect(await databaseExists(mapping[crm]!)).toBe(false);
    });

    it('target.database with several databases selected is refused before anything is written', async () => {
      const into = targetName(shop, 'ambiguous');
      const error = await source().restoreArchive!(restoreInput(path, snapshot), { target: { database: into }, signal: signal() }).catch((e: unknown) => e);
      expect(codeOf(error)).toBe('CONFIG');
      expect((error as Error).message).toMatch(/use databaseMapping/);
      expect(await databaseExists(into)).toBe(false);
    });
  });

  it('over SSH, dumps and restores a database whose name has a quote, a space and unicode', async () => {
    const sshd = sshdState();
    const adapter = source({
      ssh: { host: sshd.host, port: sshd.port, username: sshd.user, hostKeySha256: sshd.hostKeySha256 },
      sshPrivateKey: readFileSync(sshd.keyPath, 'utf8'),
    });
    const odd = await database("it's arch é");
    const oddExpected = await seed(odd, 500);
    const { path, index, snapshot } = await archiveDump(adapter, [odd, crm], 'zstd');
    expect(dumpsOf(index.entries).map((entry) => [entry.database, entry.path])).toEqual([
      [odd, `.holdfast/databases/${encodeURIComponent(odd)}`],
      [crm, `.holdfast/databases/${encodeURIComponent(crm)}`],
    ]);
    const mapping = { [odd]: targetName(odd, 'ssh'), [crm]: targetName(crm, 'ssh') };
    await adapter.restoreArchive!(restoreInput(path, snapshot), { target: { databaseMapping: mapping }, signal: signal() });
    expect(await checksums(mapping[odd]!)).toEqual(oddExpected);
    expect(await checksums(mapping[crm]!)).toEqual(crmExpected);
  });

  it('a single database with compression none is a tar that GNU tar lists', async () => {
    const { path, index, stats } = await archiveDump(source(), [crm], 'none');
    expect(stats.databases).toEqual([crm]);
    expect(dumpsOf(index.entries).map((entry) => entry.database)).toEqual([crm]);
    const { stdout } = await run('tar', ['-tf', path]);
    expect(stdout.split('\n')).toContain(`.holdfast/databases/${encodeURIComponent(crm)}.part-00000000`);
  });

  it('stores the globals as globals.sql and replays them before the databases when restoreGlobals is on', async () => {
    const role = `hf_pgarch_${randomBytes(3).toString('hex')}`;
    roles.push(role);
    await sql('postgres', `CREATE ROLE "${role}" NOLOGIN`);
    const { path, index, snapshot } = await archiveDump(source({ includeGlobals: true }), [shop], 'zstd');
    const globals = index.entries.find((entry) => entry.path === 'globals.sql');
    expect(globals).toMatchObject({ kind: 'file', mode: 0o600 });
    expect(dumpsOf(index.entries).map((entry) => entry.database)).toEqual([shop]);
    const text = await collect(openMember(fileRangeReader(path), globals!));
    expect(text.toString('utf8')).toContain(`CREATE ROLE ${role};`);

    await sql('postgres', `DROP ROLE "${role}"`);
    const rolesBefore = await roleNames();
    try {
      const skipped = targetName(shop, 'noglob');
      await source({ restoreGlobals: false }).restoreArchive!(restoreInput(path, snapshot), { target: { database: skipped }, signal: signal() });
      expect(await checksums(skipped)).toEqual(shopExpected);
      expect(await roleNames()).not.toContain(role);

      const into = targetName(shop, 'glob');
      await source().restoreArchive!(restoreInput(path, snapshot), { target: { databaseMapping: { [shop]: into } }, signal: signal() });
      expect(await roleNames()).toContain(role);
      expect(await checksums(into)).toEqual(shopExpected);
    } finally {
      await dropRolesRecreatedBy(text, rolesBefore, [role]);
    }
  });

  it('a damaged member fails the restore with CONFIG naming it, even when pg_restore took the bytes', async () => {
    const { path, index, snapshot } = await archiveDump(source(), [crm], 'none');
    const entry = dumpsOf(index.entries)[0]!;
    // Flip one byte in the middle of the dump's data (row data: pg_restore itself would not notice).
    const middle = entry.offset + Math.floor(entry.length / 2);
    const handle = await open(path, 'r+');
    const byte = Buffer.alloc(1);
    await handle.read(byte, 0, 1, middle);
    await handle.write(Buffer.from([byte[0]! ^ 0x01]), 0, 1, middle);
    await handle.close();
    const error = await source()
      .restoreArchive!(restoreInput(path, snapshot), { target: { database: targetName(crm, 'damaged') }, signal: signal() })
      .catch((e: unknown) => e);
    expect(codeOf(error)).toBe('CONFIG');
    expect((error as Error).message).toContain(`the dump of "${crm}" cannot be read from archive "pg.hfa"`);
  });

  it('a database that does not exist fails dump() with NOT_FOUND before any byte', async () => {
    const error = await source()
      .dump({ databases: [shop, 'hf_no_such_db'], signal: signal(), archive: request('zstd') })
      .catch((e: unknown) => e);
    expect(codeOf(error)).toBe('NOT_FOUND');
    expect((error as Error).message).toContain('"hf_no_such_db"');
    expect(await pgDumps()).toEqual([]);
  });

  it('a pg_dump that cannot start fails dump() itself, not the stream', async () => {
    const error = await source({ binDirectory: '/nonexistent/holdfast-bin' })
      .dump({ databases: [shop], signal: signal(), archive: request('zstd') })
      .catch((e: unknown) => e);
    expect(codeOf(error)).toBe('CONFIG');
    expect((error as Error).message).toMatch(/\/nonexistent\/holdfast-bin\/pg_dump was not found/);
  });

  it('refuses an incremental chain or a previous snapshot', async () => {
    for (const overrides of [{ chain: { id: 'c1', sequence: 0, baseArchives: [] } }, { previous: resolveSnapshot([(await archiveDump(source(), [crm], 'none')).index]) }]) {
      const error = await source().dump({ databases: [shop], signal: signal(), archive: request('zstd', overrides) }).catch((e: unknown) => e);
      expect(codeOf(error)).toBe('UNSUPPORTED');
      expect((error as Error).message).toMatch(/incremental chains .* are for directory sources/);
    }
  });

  describe('with a database large enough to be interrupted', () => {
    let big: string;

    beforeAll(async () => {
      big = await database('arch_big');
      await sql(big, `CREATE TABLE blob AS SELECT g AS id, repeat(md5(g::text), 40) AS body FROM generate_series(1, 60000) g`);
    });

    it('aborting mid-dump fails the stream and done with ABORTED and leaves no pg_dump running', async () => {
      const controller = new AbortController();
      const dump = await source().dump({ databases: [shop, big], signal: controller.signal, archive: request('none') });
      const drained = pipeline(dump.stream, new PassThrough({ highWaterMark: 1024 }), new Writable({ highWaterMark: 1024, write: (_c, _e, cb) => setTimeout(cb, 20) }));
      // Abort while big's pg_dump runs (its session is open), not between two databases.
      expect(await sessionOn(big)).toBe(true);
      expect(await pgDumps()).not.toEqual([]);
      controller.abort();
      await expect(drained).rejects.toBeTruthy();
      await expect(dump.done).rejects.toSatisfy((e: unknown) => codeOf(e) === 'ABORTED');
      expect(await noPgDumpLeft()).toEqual([]);
    });

    it('a consumer that goes away stops pg_dump and fails done', async () => {
      const dump = await source().dump({ databases: [big], signal: signal(), archive: request('zstd') });
      expect(await sessionOn(big)).toBe(true);
      dump.stream.destroy();
      await expect(dump.done).rejects.toSatisfy((e: unknown) => codeOf(e) === 'ABORTED');
      expect(await noPgDumpLeft()).toEqual([]);
    });

    it('a pg_dump that dies after the first database fails the stream and done', async () => {
      const dump = await source().dump({ databases: [shop, big], signal: signal(), archive: request('zstd') });
      const consumed = pipeline(dump.stream, new PassThrough({ highWaterMark: 1024 }), new Writable({ write: (_c, _e, cb) => setTimeout(cb, 2) }));
      consumed.catch(() => undefined);
      // Once big's pg_dump has its session, end it from the server side: pg_dump exits non-zero mid-stream.
      expect(await sessionOn(big)).toBe(true);
      const terminated = await sql('postgres', `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'holdfast'`, [big]);
      expect(terminated.length).toBeGreaterThan(0);
      const [done, stream] = await Promise.allSettled([dump.done, consumed]);
      expect(done.status).toBe('rejected');
      expect(stream.status).toBe('rejected');
      expect(String((done as PromiseRejectedResult).reason)).toContain(`pg_dump of "${big}" failed`);
      expect(await noPgDumpLeft()).toEqual([]);
    });
  });
});
