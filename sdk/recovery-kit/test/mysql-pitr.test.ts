// The kit's MySQL/MariaDB point-in-time restore (`mysql-pitr`) without a server: the choice of binary log pieces
// (partials, gaps, a position past the archive), the walk of event headers across chunk boundaries, the base's filter
// (header, accounts section, a multi-database script cut to one database, truncation), the replay watch on sample
// lines of mariadb-binlog output, and the command's refusals that come before any connection. The restore against a
// real base and binary log written by the engine and a real MariaDB is
// plugins/engine/test/codec/recovery-kit-mysql-pitr.test.ts.
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';

// The kit is plain JavaScript without type declarations: loaded by URL, so the type check leaves it alone.
const kitUrl = (name: string) => new URL(`../kit/${name}`, import.meta.url).href;
const binlog = await import(kitUrl('mysql-binlog.mjs'));
const base = await import(kitUrl('mysql-base.mjs'));
const watchModule = await import(kitUrl('mysql-replay-watch.mjs'));
const script = new URL('../kit/holdfast-decrypt.mjs', import.meta.url).pathname;

const temps: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hf-kit-mysql-unit-'));
  temps.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of temps) await rm(dir, { recursive: true, force: true });
});

/** Runs a Transform over `parts` and answers its output, or its error. */
async function through(transform: NodeJS.ReadWriteStream, parts: Buffer[]): Promise<{ out: string; error?: { exitCode?: number; message: string } }> {
  let out = '';
  try {
    for await (const chunk of Readable.from(parts).pipe(transform)) out += (chunk as Buffer).toString('latin1');
    return { out };
  } catch (error) {
    return { out, error: error as { exitCode?: number; message: string } };
  }
}

const cut = (buffer: Buffer, size: number) => Array.from({ length: Math.ceil(buffer.length / size) }, (_, index) => buffer.subarray(index * size, (index + 1) * size));

describe('binary log pieces', () => {
  async function folderWith(names: string[]): Promise<string> {
    const dir = await tempDir();
    await mkdir(join(dir, '00000001'));
    for (const name of names) await writeFile(join(dir, '00000001', name), 'x');
    await writeFile(join(dir, 'notes.txt'), 'not a piece');
    return dir;
  }

  it('takes completed files from the base on, a partial only as the newest, and ignores other series and files', async () => {
    const dir = await folderWith(['mysql-bin.000003.zst.enc', 'mysql-bin.000004.zst.enc', 'mysql-bin.000004.partial.zst.enc', 'mysql-bin.000005.partial.zst.enc', 'other-bin.000004.zst.enc']);
    const { pieces, ignored } = binlog.scanBinlogFolder(dir, 'mysql-bin');
    expect(ignored).toBe(2);
    const plan = binlog.planBinlogs(pieces, { startFile: 'mysql-bin.000004' });
    expect(plan.map((piece: { name: string; partial: boolean }) => [piece.name, piece.partial])).toEqual([
      ['mysql-bin.000004', false],
      ['mysql-bin.000005', true],
    ]);
    expect(binlog.planBinlogs(pieces, { startFile: 'mysql-bin.000004', lastFile: 'mysql-bin.000004' })).toHaveLength(1);
  });

  it('refuses a missing start file (9), a gap or a lone partial before the newest (9), and a position past the archive (8)', async () => {
    const dir = await folderWith(['mysql-bin.000004.zst.enc', 'mysql-bin.000005.partial.zst.enc', 'mysql-bin.000006.zst.enc', 'mysql-bin.000008.zst.enc']);
    const { pieces } = binlog.scanBinlogFolder(dir, 'mysql-bin');
    expect(() => binlog.planBinlogs(pieces, { startFile: 'mysql-bin.000003' })).toThrow(expect.objectContaining({ exitCode: 9, message: expect.stringContaining('mysql-bin.000003, where the base backup starts') }));
    expect(() => binlog.planBinlogs(pieces, { startFile: 'mysql-bin.000004' })).toThrow(
      expect.objectContaining({ exitCode: 9, message: expect.stringContaining('mysql-bin.000005 (only a partial is here; the completed file is missing), mysql-bin.000007') }),
    );
    expect(() => binlog.planBinlogs(pieces, { startFile: 'mysql-bin.000006', lastFile: 'mysql-bin.000009' })).toThrow(expect.objectContaining({ exitCode: 8 }));
  });

  it('walks event headers split over any chunk size: the newest time from a start offset, the length, the magic', async () => {
    const event = (seconds: number, length: number) => {
      const bytes = Buffer.alloc(length);
      bytes.writeUInt32LE(seconds, 0);
      bytes.writeUInt32LE(length, 9);
      return bytes;
    };
    const file = Buffer.concat([Buffer.from([0xfe, 0x62, 0x69, 0x6e]), event(100, 30), event(300, 50), event(200, 19)]);
    for (const size of [1, 3, 13, 40, 1000]) {
      const all = new binlog.EventWalk('f', 4);
      await through(all, cut(file, size));
      const fromThird = new binlog.EventWalk('f', 84);
      await through(fromThird, cut(file, size));
      expect([size, all.newestSeconds, all.bytes, fromThird.newestSeconds]).toEqual([size, 300, 103, 200]);
    }
    const notBinlog = await through(new binlog.EventWalk('f', 4), [Buffer.from('-- SQL text')]);
    expect(notBinlog.error?.exitCode).toBe(4);
    const short = event(1, 19);
    short.writeUInt32LE(5, 9);
    const damaged = await through(new binlog.EventWalk('f', 4), [Buffer.concat([file.subarray(0, 4), short])]);
    expect(damaged.error?.message).toContain('claims 5 bytes');
  });
});

describe('the base script', () => {
  const multi = [
    '-- holdfast-mysql: {"version":1,"mode":"multi","databases":["shop","blog"],"users":true}',
    "CREATE USER IF NOT EXISTS 'app'@'%';",
    '-- holdfast-mysql-section: data',
    '/*!40101 SET NAMES utf8mb4 */;',
    "-- CHANGE MASTER TO MASTER_LOG_FILE='mysql-bin.000042', MASTER_LOG_POS=1234;",
    '-- Current Database: `blog`',
    'CREATE DATABASE /*!32312 IF NOT EXISTS*/ `blog` /*!40100 DEFAULT CHARACTER SET latin1 */;',
    'USE `blog`;',
    `INSERT INTO posts VALUES ${'(1),'.repeat(2000)}(2);`,
    '-- Current Database: `shop`',
    'CREATE DATABASE /*!32312 IF NOT EXISTS*/ `shop` /*!40100 DEFAULT CHARACTER SET utf8mb4 */;',
    'USE `shop`;',
    'INSERT INTO orders VALUES (7);',
    '-- Dump completed on 2026-12-06 22:00:00',
    '',
  ].join('\n');

  it('keeps one database of a multi-database script under its new name, without the accounts, and finds the coordinates', async () => {
    for (const size of [7, 100, 100_000]) {
      const filter = new base.BaseScript('base', 'shop', 'shop_restored');
      const { out, error } = await through(filter, cut(Buffer.from(multi), size));
      expect(error).toBeUndefined();
      expect(out).toBe(
        [
          '/*!40101 SET NAMES utf8mb4 */;',
          "-- CHANGE MASTER TO MASTER_LOG_FILE='mysql-bin.000042', MASTER_LOG_POS=1234;",
          '-- Current Database: `shop`',
          'ALTER DATABASE `shop_restored` /*!40100 DEFAULT CHARACTER SET utf8mb4 */;',
          'USE `shop_restored`;',
          'INSERT INTO orders VALUES (7);',
          '-- Dump completed on 2026-12-06 22:00:00',
          '',
        ].join('\n'),
      );
      expect(filter.found.coordinates).toEqual({ file: 'mysql-bin.000042', offset: 1234 });
    }
  });

  it('refuses a database the base does not hold (2), a physical base (2), a script without header (4) and a truncated one (4)', async () => {
    const missing = await through(new base.BaseScript('base', 'crm', 'crm'), [Buffer.from(multi)]);
    expect(missing.error).toMatchObject({ exitCode: 2, message: expect.stringContaining('holds no database "crm" (it holds "shop", "blog")') });
    const plain = await through(new base.BaseScript('base', 'shop', 'shop'), [Buffer.from('-- MariaDB dump 10.19\nCREATE TABLE t (a int);\n')]);
    expect(plain.error).toMatchObject({ exitCode: 4, message: expect.stringContaining('not a Holdfast MySQL/MariaDB dump') });
    const physical = await through(new base.BaseScript('base', 'shop', 'shop'), [Buffer.from('-- holdfast-mysql-physical: {"version":1}\nbinary')]);
    expect(physical.error).toMatchObject({ exitCode: 2, message: expect.stringContaining('physical base backup (mariadb-backup)') });
    const truncated = await through(new base.BaseScript('base', 'shop', 'shop'), [Buffer.from(multi.slice(0, multi.indexOf('-- Dump completed')))]);
    expect(truncated.error).toMatchObject({ exitCode: 4, message: expect.stringContaining('truncated') });
  });
});

describe('the replay watch', () => {
  const lines = [
    '# at 4',
    '#261206 22:13:05 server id 1  end_log_pos 256 CRC32 0x01 \tStart: binlog v 4',
    '#261206 22:13:06 server id 1  end_log_pos 300 CRC32 0x02 \tGTID 0-1-7 trans',
    '/*M!100001 SET @@session.gtid_seq_no=7*//*!*/;',
    'START TRANSACTION',
    '/*!*/;',
    '#261206 22:13:06 server id 1  end_log_pos 350 CRC32 0x03 \tTable_map: `shop`.`orders` mapped to number 18',
    "BINLOG '",
    'AAAA',
    "'/*!*/;",
    '#261206 22:13:06 server id 1  end_log_pos 400 CRC32 0x04 \tXid = 11',
    'COMMIT/*!*/;',
    '#261206 22:13:08 server id 1  end_log_pos 450 CRC32 0x05 \tGTID 0-1-8 ddl',
    '#261206 22:13:08 server id 1  end_log_pos 500 CRC32 0x06 \tQuery\tthread_id=5\texec_time=0\terror_code=0',
    "CREATE USER 'eve'@'%' IDENTIFIED BY 'x'",
    '/*!*/;',
    '#261206 22:13:09 server id 1  end_log_pos 550 CRC32 0x07 \tGTID 0-1-9 trans',
    'START TRANSACTION',
    '/*!*/;',
    '#261206 22:13:09 server id 1  end_log_pos 600 CRC32 0x08 \tXid = 12',
    'COMMIT/*!*/;',
    '',
  ].join('\n');

  it('counts the transactions of the database, leaves out account statements and (when asked) the GTID settings', async () => {
    const watch = new watchModule.ReplayWatch(['shop', 'blog'], false);
    const { out } = await through(watch, cut(Buffer.from(lines), 17));
    expect(watch.transactions).toBe(1);
    expect(watch.lastBegan.toISOString()).toBe('2026-12-06T22:13:06.000Z');
    expect(watch.accountStatements).toBe(1);
    expect(out).not.toContain('CREATE USER');
    expect(out).not.toContain('gtid_seq_no');
    expect(out).toContain("BINLOG '\nAAAA\n'/*!*/;");
    const keeping = new watchModule.ReplayWatch([], true);
    expect((await through(keeping, [Buffer.from(lines)])).out).toContain('gtid_seq_no=7');
  });

  it('stops a statement that names another database before it passes (10)', async () => {
    const statement = ['#261206 22:13:10 server id 1  end_log_pos 700 CRC32 0x09 \tQuery\tthread_id=5\texec_time=0\terror_code=0', 'use `shop_restored`/*!*/;', 'UPDATE shop.orders SET n = 1', '/*!*/;', ''].join('\n');
    const watch = new watchModule.ReplayWatch(['shop', 'blog'], true);
    const { out, error } = await through(watch, [Buffer.from(statement)]);
    expect(error).toMatchObject({ exitCode: 10, message: expect.stringContaining('names another database itself (shop.)') });
    expect(out).not.toContain('UPDATE');
    const harmless = new watchModule.ReplayWatch(['shop'], true);
    expect((await through(harmless, [Buffer.from(statement.replace('shop.orders', 'orders'))])).error).toBeUndefined();
  });
});

describe('the mysql-pitr command before any connection', () => {
  const run = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, [script, 'mysql-pitr', ...args], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } });

  it('refuses bad names, targets, a target before the base, a missing start file and missing client programs, and leaves its work folder empty', async () => {
    const dir = await tempDir();
    const work = join(dir, 'work');
    await mkdir(work);
    await mkdir(join(dir, 'wal'));
    const baseFile = join(dir, 'shop.sql.gz.enc');
    await writeFile(baseFile, 'x');
    await writeFile(`${baseFile}.meta.json`, JSON.stringify({ compression: 'GZIP', pointInTime: { logKind: 'mysql-binlog', startPosition: 'mysql-bin.000042:1234', startSegment: 'mysql-bin.000042', consistentAt: '2026-12-06T22:00:00.000Z' } }));
    const common = ['--base', baseFile, '--binlogs', join(dir, 'wal'), '--work-dir', work];
    const cases: Array<[string[], number, string]> = [
      [[...common, '--database', 'sh`op', '--latest'], 2, 'is not a database name'],
      [[...common, '--database', 'shop', '--into', 'mysql', '--latest'], 2, 'system schema'],
      [[...common, '--database', 'shop', '--target-time', '2026-12-06 23:00:00'], 2, 'with its offset'],
      [[...common, '--database', 'shop', '--target-position', '0/3000028'], 2, '<binary log file>:<offset>'],
      [[...common, '--database', 'shop', '--target-time', '2026-12-06T22:59:00+02:00'], 8, 'before this base backup was taken'],
      [[...common, '--database', 'shop', '--target-position', 'mysql-bin.000042:1000'], 8, 'not after this base backup'],
      [[...common, '--database', 'shop', '--latest'], 9, 'mysql-bin.000042, where the base backup starts'],
    ];
    // With the base's start file present, the next refusal is a missing mariadb-binlog (an empty --bin-dir).
    const withStart = join(dir, 'wal-with-start');
    await mkdir(withStart);
    await writeFile(join(withStart, 'mysql-bin.000042.gz.enc'), 'x');
    await mkdir(join(dir, 'empty-bin'));
    cases.push([[...common.slice(0, 2), '--binlogs', withStart, '--work-dir', work, '--database', 'shop', '--latest', '--bin-dir', join(dir, 'empty-bin')], 11, 'neither mariadb-binlog nor mysqlbinlog was found']);
    for (const [args, code, message] of cases) {
      const result = run(args, { HOLDFAST_KEY: '00'.repeat(32) });
      expect([result.status, result.stderr]).toEqual([code, expect.stringContaining(message)]);
    }
    expect(await readdir(work)).toEqual([]);
  });
});
