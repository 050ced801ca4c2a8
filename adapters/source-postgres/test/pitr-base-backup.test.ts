// Issue 43: physical base backups of the PITR test cluster (127.0.0.1:5433) with pg_basebackup, through the source's
// dump() as a scheduled run takes them and through pointInTime().baseBackup. The tar is checked with GNU tar, the
// recorded positions against backup_label and the server.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, type BaseBackupStats, type SourceAdapter } from '@holdfast/sdk';
import definition from '../src/index.js';
import { postgresSourceConfig } from '../src/config.js';
import { checkReplication } from '../src/internal/replication-check.js';
import { parseLsn } from '../src/internal/pitr/wal-names.js';
import { physicalSettings, pitr, superSql } from './pitr-helpers.js';

const work = mkdtempSync(join(tmpdir(), 'hf-pitr-base-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const adapter = (settings: Record<string, unknown>) => instantiateAdapter(container, definition, settings) as SourceAdapter;
const tarText = (file: string, member: string) => spawnSync('tar', ['-xOf', file, member], { encoding: 'utf8' }).stdout;

describe('a physical-mode source takes base backups', () => {
  it('dump() streams a tar of the cluster whose positions match backup_label and the server', async () => {
    const source = adapter(physicalSettings());
    const before = new Date();
    const handle = await source.dump({ databases: [], signal: new AbortController().signal });
    expect(handle.extension).toBe('.tar');
    const file = join(work, 'base.tar');
    await pipeline(handle.stream, createWriteStream(file));
    const stats = (await handle.done) as BaseBackupStats;
    const after = new Date();

    const listing = spawnSync('tar', ['-tf', file], { encoding: 'utf8' });
    expect(listing.status).toBe(0);
    const members = listing.stdout.split('\n');
    expect(members).toEqual(expect.arrayContaining(['backup_label', 'global/pg_control', 'PG_VERSION', 'backup_manifest']));
    expect(members.some((name) => name.startsWith('pg_wal/0000'))).toBe(false); // -X none: the WAL stream has the WAL
    expect(stats.bytes).toBe((await import('node:fs')).statSync(file).size);
    expect(stats.databases).toEqual([]);
    expect(stats.engineVersion).toMatch(/^15\.\d+$/);

    const label = tarText(file, 'backup_label');
    const [, startLsn, startFile] = /^START WAL LOCATION: (\S+) \(file (\w+)\)/m.exec(label)!;
    expect(stats.base).toMatchObject({ logKind: 'postgres-wal', startPosition: startLsn, startSegment: startFile, timeline: Number(/^START TIMELINE: (\d+)/m.exec(label)![1]) });
    const manifest = JSON.parse(tarText(file, 'backup_manifest')) as { 'WAL-Ranges': Array<{ 'End-LSN': string }> };
    expect(stats.base.stopPosition).toBe(manifest['WAL-Ranges'].at(-1)!['End-LSN']);
    expect(parseLsn(stats.base.stopPosition)).toBeGreaterThan(parseLsn(stats.base.startPosition));

    // The server agrees: its segment name for the start, its system identifier, and a current position past the stop.
    const [server] = await superSql<{ walfile: string; current: string; system: string; version: string }>(
      `SELECT pg_walfile_name($1::pg_lsn) AS walfile, pg_current_wal_lsn()::text AS current,
              (SELECT system_identifier::text FROM pg_control_system()) AS system, current_setting('server_version') AS version`,
      [stats.base.startPosition],
    );
    expect(stats.base.startSegment).toBe(server!.walfile);
    expect(stats.base.systemId).toBe(server!.system);
    expect(server!.version.startsWith(stats.base.serverVersion)).toBe(true);
    expect(parseLsn(server!.current)).toBeGreaterThanOrEqual(parseLsn(stats.base.stopPosition));
    const check = await checkReplication(postgresSourceConfig.parse(physicalSettings()));
    expect(check.connection.accepted && check.connection.systemIdentifier).toBe(stats.base.systemId);

    expect(stats.base.startedAt.getTime()).toBeGreaterThanOrEqual(before.getTime());
    expect(stats.base.consistentAt.getTime()).toBeGreaterThanOrEqual(stats.base.startedAt.getTime());
    expect(stats.base.consistentAt.getTime()).toBeLessThanOrEqual(after.getTime());
  }, 30_000);

  it('pointInTime() offers base backups in physical mode and is null in logical mode', async () => {
    expect(adapter({ host: pitr.host, port: pitr.port, ...pitr.roles.repl }).pointInTime?.()).toBeNull();
    const support = adapter(physicalSettings()).pointInTime?.();
    expect(support?.logKind).toBe('postgres-wal');
    const handle = await support!.baseBackup({ signal: new AbortController().signal });
    let streamed = 0;
    for await (const chunk of handle.stream) streamed += (chunk as Buffer).length;
    const stats = await handle.done;
    expect(stats.bytes).toBe(streamed);
    expect(stats.base.startSegment).toMatch(/^00000001[0-9A-F]{16}$/);
  }, 30_000);

  it('an abort after the first bytes rejects done as ABORTED and ends the stream', async () => {
    const controller = new AbortController();
    const handle = await adapter(physicalSettings()).dump({ databases: [], signal: controller.signal });
    let chunks = 0;
    const reading = (async () => {
      for await (const chunk of handle.stream) {
        void chunk;
        chunks++;
        controller.abort();
      }
    })();
    await expect(reading).rejects.toMatchObject({ code: 'ABORTED' });
    await expect(handle.done).rejects.toMatchObject({ code: 'ABORTED' });
    expect(chunks).toBe(1);
    expect(handle.stream.destroyed).toBe(true);
  }, 30_000);

  it('a role without REPLICATION is refused with the replication check sentences, before any byte', async () => {
    const failure = await adapter(physicalSettings('norepl'))
      .dump({ databases: [], signal: new AbortController().signal })
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'AUTH' });
    expect((failure as Error).message).toContain('role "holdfast_norepl" lacks the REPLICATION privilege: run ALTER ROLE "holdfast_norepl" REPLICATION;');
    expect((failure as Error).message).toContain('add "host replication holdfast_norepl 127.0.0.1/32 scram-sha-256"');
    expect((failure as Error).message).not.toContain(pitr.roles.norepl.password);
  }, 30_000);
});

describe('failures of pg_basebackup', () => {
  // A wrapper around the real pg_basebackup in binDirectory lets the test make it fail at a chosen moment.
  function wrapper(name: string, script: string): string {
    const dir = join(work, name);
    spawnSync('mkdir', ['-p', dir]);
    const file = join(dir, 'pg_basebackup');
    writeFileSync(file, `#!/bin/sh\n${script}\n`);
    chmodSync(file, 0o755);
    return dir;
  }

  it('a pg_basebackup that fails after writing the whole tar rejects done', async () => {
    const binDirectory = wrapper('fails-late', '/usr/bin/pg_basebackup "$@" || exit 1\necho "pg_basebackup: error: simulated failure after the tar" >&2\nexit 3');
    const handle = await adapter(physicalSettings('repl', { binDirectory })).dump({ databases: [], signal: new AbortController().signal });
    let streamed = 0;
    const consumed = (async () => {
      for await (const chunk of handle.stream) streamed += (chunk as Buffer).length;
    })();
    await expect(handle.done).rejects.toMatchObject({ code: 'TRANSIENT', message: expect.stringContaining('simulated failure after the tar') });
    await consumed.catch(() => undefined);
    expect(streamed).toBeGreaterThan(1024 * 1024);
  }, 30_000);
});

// The shared PITR cluster must not get a tablespace (every other base backup on it would fail), so a throwaway
// cluster with one is started here (about 2 s), as replication-check.test.ts does for wal_level=minimal.
const initdb = '/usr/lib/postgresql/15/bin/initdb';
const canStartCluster = process.getuid?.() === 0 && existsSync(initdb);
describe.skipIf(!canStartCluster)('a cluster with a tablespace besides pg_default (needs root and PostgreSQL 15 binaries)', () => {
  const port = 5438;
  const directory = join(work, 'tablespace-cluster');
  const data = join(directory, 'data');
  const asPostgres = (command: string, args: string[]) =>
    spawnSync('runuser', ['-u', 'postgres', '--', `/usr/lib/postgresql/15/bin/${command}`, ...args], { encoding: 'utf8', timeout: 60_000 });

  beforeAll(() => {
    const taken = spawnSync('ss', ['-Hltn', `sport = :${port}`], { encoding: 'utf8' }).stdout.trim();
    if (taken) throw new Error(`port ${port} is taken; the tablespace test cluster needs it`);
    const postgresUid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout);
    mkdirSync(join(directory, 'space'), { recursive: true });
    chownSync(work, postgresUid, 0);
    chownSync(directory, postgresUid, 0);
    chownSync(join(directory, 'space'), postgresUid, 0);
    const init = asPostgres('initdb', ['-D', data, '-U', 'root', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8']);
    if (init.status !== 0) throw new Error(`initdb: ${init.stderr}`);
    const settings = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${directory} -c wal_level=replica -c fsync=off`;
    const start = asPostgres('pg_ctl', ['-D', data, '-o', settings, '-l', join(directory, 'log'), '-w', 'start']);
    if (start.status !== 0) throw new Error(`pg_ctl start: ${start.stderr} ${start.stdout}`);
    const create = spawnSync('psql', ['-h', directory, '-p', String(port), '-U', 'root', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-c', `CREATE TABLESPACE hf_extra LOCATION '${join(directory, 'space')}'`], { encoding: 'utf8' });
    if (create.status !== 0) throw new Error(`CREATE TABLESPACE: ${create.stderr}`);
  }, 60_000);

  afterAll(() => {
    asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
  });

  it('is refused as CONFIG naming the tablespace, before any byte', async () => {
    const failure = await adapter({ host: '127.0.0.1', port, user: 'root', mode: 'physical' })
      .dump({ databases: [], signal: new AbortController().signal })
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'CONFIG', message: expect.stringContaining('has 1 tablespace(s) ("hf_extra") besides pg_default and pg_global') });
  }, 30_000);
});

describe('physical mode settings and refusals', () => {
  it('refuses ssh in physical mode, naming the field', () => {
    const parsed = postgresSourceConfig.safeParse({ ...physicalSettings(), ssh: { host: 'db.example', username: 'backup', hostKeySha256: `SHA256:${'A'.repeat(43)}` } });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({ path: ['ssh'], message: expect.stringContaining('mode "physical" cannot be combined with ssh') });
    expect(postgresSourceConfig.parse(physicalSettings()).walFlushIntervalSeconds).toBe(10);
    expect(postgresSourceConfig.safeParse({ ...physicalSettings(), walFlushIntervalSeconds: 0 }).success).toBe(false);
  });

  it('test-connection runs the replication check; logical restore, scratch and seekable archives are refused', async () => {
    const source = adapter(physicalSettings());
    expect(await source.check()).toMatchObject({ ok: true, message: expect.stringContaining('ready for point-in-time recovery') });
    expect(await adapter(physicalSettings('replNoHba')).check()).toMatchObject({ ok: false, message: expect.stringContaining('has no line allowing replication connections') });
    await expect(source.restore((await import('node:stream')).Readable.from([]), { target: { database: 'x' }, signal: new AbortController().signal })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringContaining('a physical base backup is restored to a point in time (restore with a recovery target), not into a database'),
    });
    expect(() => source.scratch!()).toThrow(expect.objectContaining({ code: 'UNSUPPORTED' }));
    const archive = { archiveName: 'x.hfa', createdAt: new Date(), compression: 'none' as const, chain: null };
    await expect(source.dump({ databases: [], signal: new AbortController().signal, archive })).rejects.toMatchObject({ code: 'UNSUPPORTED', message: expect.stringContaining('not seekable archives') });
    expect(await source.listDatabases()).toContain('postgres');
  }, 30_000);
});
