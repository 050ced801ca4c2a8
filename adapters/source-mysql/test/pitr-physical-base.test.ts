// Issue 44, scope 1 and acceptance 4 (physical base): with `baseMethod: 'physical'` a point-in-time source's backup is
// `mariadb-backup --stream=xbstream` of the PITR MariaDB (127.0.0.1:3307, whose data directory is local here), and a
// restore to a point in time prepares it, reads the database from a throwaway server and replays the binary log from
// the base's coordinates. A writer commits throughout the backup, so coordinates off by one transaction show: rows
// committed around the base must be in the restore exactly once (a counter row counts every commit).
import { randomBytes } from 'node:crypto';
import { copyFileSync, createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import mysql from 'mysql2/promise';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type BaseBackupInfo, type BaseBackupStats, type PointInTimeSupport, type RecoveryTarget } from '@holdfast/sdk';
import definition from '../src/index.js';
import { openBinlogStream } from '../src/internal/pitr/binlog-stream.js';
import { chooseBase } from '../src/internal/pitr/physical-base.js';
import { adminSql, pitrConfig, pitrServer } from './pitr-helpers.js';

const id = randomBytes(4).toString('hex');
const database = `hf_pitr_pb_${id}`;
const work = mkdtempSync(join(tmpdir(), 'hf-pitr-physical-test-'));
const spool = join(work, 'spool');
const baseFile = join(work, 'base.xbstream');
/** The archive: each binary log file's latest version by name, as the engine keeps it (on disk: other files on the
 * server may write hundreds of MB meanwhile). */
const archiveDir = join(work, 'archive');

/** One committed change: an insert of `id`, or (id 0) a counter increment; `at` is its statement's NOW(). */
interface Change {
  id: number;
  at: number;
}
const changes: Change[] = [];
let base: BaseBackupInfo;
let extension: string;
const created: string[] = [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The rows as of the start of `second` (all when undefined): inserted ids, and the counter's number of commits. */
function expected(second?: number): { items: number[]; counter: number } {
  const kept = changes.filter((change) => second === undefined || change.at < second);
  return { items: kept.filter((change) => change.id > 0).map((change) => change.id), counter: kept.filter((change) => change.id === 0).length };
}

async function stateOf(name: string): Promise<{ items: number[]; counter: number }> {
  const items = await adminSql<{ id: number }>(`SELECT id FROM \`${name}\`.items ORDER BY id`);
  const [counter] = await adminSql<{ n: number }>(`SELECT n FROM \`${name}\`.counter WHERE id = 1`);
  return { items: items.map((row) => row.id), counter: Number(counter!.n) };
}

/** Throwaway folders of physical restores left in the temp directory, and mariadbd processes started on one. */
function leftovers(): { folders: string[]; servers: string[] } {
  const folders = readdirSync(tmpdir()).filter((name) => name.startsWith('holdfast-mariadb-physical-') || name.startsWith('holdfast-mariadb-backup-'));
  const servers = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        return '';
      }
    })
    .filter((command) => command.includes('holdfast-mariadb-physical-'));
  return { folders, servers };
}

function support(overrides: Record<string, unknown> = {}): PointInTimeSupport {
  return instantiateAdapter(container, definition, { ...pitrConfig('admin', overrides) }).pointInTime!()!;
}

async function restore(target: RecoveryTarget, into: string) {
  created.push(into);
  return support().restoreToPoint({
    base,
    baseStream: createReadStream(baseFile),
    fetchSegment: async (name) => (existsSync(join(archiveDir, name)) ? createReadStream(join(archiveDir, name)) : null),
    target,
    database: { name: database, into },
    signal: new AbortController().signal,
  });
}

beforeAll(async () => {
  mkdirSync(spool);
  mkdirSync(archiveDir);
  await adminSql(`CREATE DATABASE ${database}`);
  await adminSql(`CREATE TABLE ${database}.items (id INT PRIMARY KEY, at DATETIME NOT NULL) ENGINE=InnoDB`);
  await adminSql(`CREATE TABLE ${database}.counter (id INT PRIMARY KEY, n INT NOT NULL, at DATETIME NULL) ENGINE=InnoDB`);
  await adminSql(`INSERT INTO ${database}.counter (id, n) VALUES (1, 0)`);

  const controller = new AbortController();
  const stream = openBinlogStream(pitrConfig('binlog'), { streamId: `test-physical-${id}`, spoolDir: spool, flushIntervalMs: 500, signal: controller.signal });
  let covered = 0;
  const consumed = (async () => {
    for await (const segment of stream.segments) {
      copyFileSync(segment.path, join(archiveDir, segment.name));
      covered = Math.max(covered, segment.coversUntil.getTime());
      await stream.archived(segment);
    }
  })();
  consumed.catch(() => undefined);
  const { user, password } = pitrServer.users.admin;
  const writer = await mysql.createConnection({ host: pitrServer.host, port: pitrServer.port, user, password, database });
  let isWriting = true;
  let lastWrite = 0;
  // Commits all the time, before, during and after the backup: an insert and a counter increment per round.
  const writing = (async () => {
    let next = 1;
    while (isWriting) {
      const key = next++;
      await writer.query('INSERT INTO items (id, at) VALUES (?, NOW())', [key]);
      const [[inserted]] = await writer.query<mysql.RowDataPacket[]>('SELECT UNIX_TIMESTAMP(at) AS at FROM items WHERE id = ?', [key]);
      changes.push({ id: key, at: Number(inserted!.at) });
      await writer.query('UPDATE counter SET n = n + 1, at = NOW() WHERE id = 1');
      const [[counted]] = await writer.query<mysql.RowDataPacket[]>('SELECT UNIX_TIMESTAMP(at) AS at FROM counter WHERE id = 1');
      changes.push({ id: 0, at: Number(counted!.at) });
      lastWrite = Date.now();
      await sleep(40);
    }
  })();
  try {
    await new Promise<void>((resolve) => stream.onNotice((notice) => notice.type === 'started' && resolve()));
    await sleep(300);
    const source = instantiateAdapter(container, definition, { ...pitrConfig('binlog', { baseMethod: 'physical' }) });
    const handle = await source.dump({ databases: [], signal: new AbortController().signal });
    extension = handle.extension;
    await pipeline(handle.stream, createWriteStream(baseFile));
    base = ((await handle.done) as BaseBackupStats).base;
    // Writes after the base spread over more than three whole seconds, so a time target falls between them.
    await sleep(3500);
  } finally {
    isWriting = false;
    await writing;
    await writer.end();
  }
  try {
    // Generous: the stream also carries whatever else the shared server logs (a bench may write GBs).
    const deadline = Date.now() + 60_000;
    while (covered < lastWrite && Date.now() < deadline) await sleep(100);
    expect(covered).toBeGreaterThanOrEqual(lastWrite);
  } finally {
    controller.abort();
    await stream.done.catch(() => undefined);
    await consumed;
  }
}, 150_000);

afterAll(async () => {
  for (const name of [database, ...created]) await adminSql(`DROP DATABASE IF EXISTS \`${name}\``);
  rmSync(work, { recursive: true, force: true });
}, 30_000);

describe('physical base backups (mariadb-backup)', () => {
  it('streams the server as xbstream after a header line, with the coordinates mariadb-backup reported', async () => {
    expect(extension).toBe('.xbstream');
    const head = Buffer.alloc(256 * 1024);
    const file = createReadStream(baseFile, { start: 0, end: head.length - 1 });
    let at = 0;
    for await (const chunk of file) at += (chunk as Buffer).copy(head, at);
    const firstLine = head.toString('latin1').split('\n')[0]!;
    expect(firstLine).toMatch(/^-- holdfast-mysql-physical: \{"version":1,"format":"xbstream","databases":\[/);
    // xbstream chunks start with their magic right after the header line.
    expect(head.subarray(firstLine.length + 1, firstLine.length + 9).toString('latin1')).toBe('XBSTCK01');
    expect(base).toMatchObject({ logKind: 'mysql-binlog', timeline: 1, serverVersion: expect.stringMatching(/^10\.11\./) });
    expect(base.startPosition).toBe(`${base.startSegment}:${base.startPosition.split(':')[1]}`);
    expect(existsSync(join(archiveDir, base.startSegment))).toBe(true);
    // The writer committed while mariadb-backup copied: the coordinates had commits on both sides to get wrong.
    const during = changes.filter((change) => change.at * 1000 >= base.startedAt.getTime() && change.at * 1000 < base.consistentAt.getTime() - 1000);
    expect(during.length).toBeGreaterThan(0);
  });

  it('refuses a database the base does not hold, before any extraction; nothing is left', async () => {
    const into = `hf_pitr_pb_r_${id}`;
    created.push(into);
    const refused = await support()
      .restoreToPoint({
        base,
        baseStream: createReadStream(baseFile),
        fetchSegment: async () => null,
        target: { type: 'latest' },
        database: { name: `hf_pitr_pb_none_${id}`, into },
        signal: new AbortController().signal,
      })
      .catch((error: unknown) => error);
    expect(isAdapterError(refused) && refused.code).toBe('CONFIG');
    expect((refused as Error).message).toContain(`holds no database "hf_pitr_pb_none_${id}"`);
    expect((refused as Error).message).toContain(`"${database}"`);
    expect(await adminSql(`SHOW DATABASES LIKE '${into}'`)).toEqual([]);
    expect(leftovers()).toEqual({ folders: [], servers: [] });
  }, 60_000);

  it('restores to latest: every commit exactly once, equal to the source; nothing of the restore is left', async () => {
    const into = `hf_pitr_pb_l_${id}`;
    const result = await restore({ type: 'latest' }, into);
    const restored = await stateOf(into);
    expect(restored).toEqual(expected());
    expect(restored).toEqual(await stateOf(database));
    expect(result.warnings).toEqual([]);
    expect(leftovers()).toEqual({ folders: [], servers: [] });
  }, 60_000);

  it('restores to a time between the writes after the base', async () => {
    const after = changes.filter((change) => change.at * 1000 > base.consistentAt.getTime());
    const second = after[0]!.at + 1;
    expect(changes.some((change) => change.at >= second)).toBe(true);
    const into = `hf_pitr_pb_t_${id}`;
    const result = await restore({ type: 'time', time: new Date(second * 1000 + 300) }, into);
    expect(await stateOf(into)).toEqual(expected(second));
    expect(expected(second)).not.toEqual(expected());
    expect(result.recoveredTo!.getTime()).toBeLessThan(second * 1000);
    expect(leftovers()).toEqual({ folders: [], servers: [] });
  }, 60_000);

  it('an abort while the base loads kills the throwaway server, deletes its folder and drops the new database', async () => {
    const into = `hf_pitr_pb_a_${id}`;
    created.push(into);
    const controller = new AbortController();
    const aborted = await support()
      .restoreToPoint({
        base,
        baseStream: createReadStream(baseFile),
        fetchSegment: async (name) => (existsSync(join(archiveDir, name)) ? createReadStream(join(archiveDir, name)) : null),
        target: { type: 'latest' },
        database: { name: database, into },
        signal: controller.signal,
        // The load starts once the throwaway server answers: the moment with the most to clean up.
        onProgress: (message) => message.startsWith('loading') && controller.abort(),
      })
      .catch((error: unknown) => error);
    expect(isAdapterError(aborted) && aborted.code).toBe('ABORTED');
    expect(await adminSql(`SHOW DATABASES LIKE '${into}'`)).toEqual([]);
    expect(leftovers()).toEqual({ folders: [], servers: [] });
  }, 60_000);

  it('auto picks physical here; without mariadb-backup auto falls back to logical and physical is refused', async () => {
    expect((await chooseBase(pitrConfig('binlog', { baseMethod: 'auto' }))).kind).toBe('physical');
    expect((await chooseBase(pitrConfig('binlog'))).kind).toBe('logical');
    // A tool folder with the client tools but no mariadb-backup.
    const tools = join(work, 'bin');
    mkdirSync(tools);
    for (const name of ['mariadb-dump', 'mariadb', 'mariadb-binlog']) symlinkSync(`/usr/bin/${name}`, join(tools, name));
    const fallback = await chooseBase(pitrConfig('binlog', { baseMethod: 'auto', binDirectory: tools }));
    expect(fallback).toMatchObject({ kind: 'logical', reason: expect.stringContaining('mariadb-backup') });
    const source = instantiateAdapter(container, definition, { ...pitrConfig('binlog', { baseMethod: 'physical', binDirectory: tools }) });
    const refused = await source.dump({ databases: [database], signal: new AbortController().signal }).catch((error: unknown) => error);
    expect(isAdapterError(refused) && refused.code).toBe('CONFIG');
    expect((refused as Error).message).toMatch(/baseMethod is physical.*mariadb-backup/);
  });
});
