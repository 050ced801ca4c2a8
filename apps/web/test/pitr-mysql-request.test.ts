// The MySQL/MariaDB restore dialog's pure rules: the database names checked as the API checks them, the suggested
// new name, the body sent (no targetPath/servePort; targetSourceId only for another server), the servers offered,
// binary log positions and wording, and which field a refusal of the API belongs under (messages as plugins/engine's
// preflight words them).
import { describe, expect, it } from 'vitest';
import { buildMysqlRestoreBody, JOB_SERVER, mysqlDatabaseNameProblem, refusedFieldOf, serverChoicesOf, suggestTargetDatabase, targetDatabaseProblem } from '../src/pitr/mysql-restore-request.js';
import { checkTarget, logKindOf, logWord } from '../src/pitr/restore-target.js';

const WINDOW = { start: '2026-12-06T13:03:27.400Z', end: '2026-12-06T14:10:02.900Z' };

describe('database names of a MySQL point-in-time restore', () => {
  it('takes 1 to 64 letters, digits, _, $ and -, Unicode letters too', () => {
    for (const name of ['shop', 'shop_2026', 'a$b-c', 'x'.repeat(64), 'bücher', '42']) expect(mysqlDatabaseNameProblem(name)).toBeNull();
  });

  it('refuses empty, too long, and names the replay cannot take unquoted', () => {
    expect(mysqlDatabaseNameProblem('')).toBe('Enter a database name');
    expect(mysqlDatabaseNameProblem('x'.repeat(65))).toContain('65 characters');
    for (const name of ['shop.db', 'shop db', 'shop`', "sh'op", 'a/b', 'a\\b', 'a->b', 'shop ', 'ta\tb']) expect(mysqlDatabaseNameProblem(name), name).toBe('Use letters, digits, "_", "$" and "-" only');
  });

  it('refuses a system schema or the restored database itself as the new database (without case)', () => {
    expect(targetDatabaseProblem('MySQL', 'shop')).toBe('"MySQL" is a system schema of the server');
    expect(targetDatabaseProblem('information_schema', 'shop')).toContain('system schema');
    expect(targetDatabaseProblem('SHOP', 'shop')).toContain('Choose a new name');
    expect(targetDatabaseProblem('shop_copy', 'shop')).toBeNull();
  });

  it('suggests <name>_restored_<yyyymmdd_hhmmss> in local time, within 64 characters, a name the API takes', () => {
    const now = new Date(2026, 11, 6, 9, 5, 7);
    expect(suggestTargetDatabase('shop', now)).toBe('shop_restored_20261206_090507');
    const long = suggestTargetDatabase('d'.repeat(64), now);
    expect([...long].length).toBe(64);
    expect(long.endsWith('_restored_20261206_090507')).toBe(true);
    expect(targetDatabaseProblem(long, 'd'.repeat(64))).toBeNull();
  });
});

describe('the request body', () => {
  it('sends target, database and targetDatabase only, trimmed', () => {
    expect(buildMysqlRestoreBody({ type: 'latest' }, ' shop ', ' shop_restored ')).toEqual({ ok: true, body: { target: { type: 'latest' }, database: 'shop', targetDatabase: 'shop_restored' } });
  });

  it('sends targetSourceId for another server only, never for the job\'s own', () => {
    expect(buildMysqlRestoreBody({ type: 'latest' }, 'shop', 'shop_copy', 'src-2')).toEqual({ ok: true, body: { target: { type: 'latest' }, database: 'shop', targetDatabase: 'shop_copy', targetSourceId: 'src-2' } });
    expect(buildMysqlRestoreBody({ type: 'latest' }, 'shop', 'shop_copy', JOB_SERVER)).toEqual({ ok: true, body: { target: { type: 'latest' }, database: 'shop', targetDatabase: 'shop_copy' } });
  });

  it('names the field of each problem and builds nothing', () => {
    expect(buildMysqlRestoreBody({ type: 'latest' }, '', 'a.b')).toEqual({ ok: false, problems: { database: 'Enter a database name', targetDatabase: 'Use letters, digits, "_", "$" and "-" only' } });
    expect(buildMysqlRestoreBody({ type: 'latest' }, 'shop', 'shop')).toMatchObject({ ok: false, problems: { targetDatabase: expect.stringContaining('new name') } });
  });
});

describe('the servers the new database can be built on', () => {
  const sources = [
    { id: 'pg-1', name: 'Cluster', adapterId: 'postgres', excludeFromRestore: false },
    { id: 'my-2', name: 'Reporting', adapterId: 'mysql', excludeFromRestore: false },
    { id: 'my-1', name: 'Production', adapterId: 'mysql', excludeFromRestore: true },
    { id: 'my-3', name: 'Production replica', adapterId: 'mysql', excludeFromRestore: true },
    { id: 'my-4', name: 'Staging', adapterId: 'mysql' },
  ];

  it("offers the job's own server first, then the other sources of its adapter that take restores", () => {
    // The job's own source is offered even when it is excluded from restores (the API decides about its own server).
    expect(serverChoicesOf(sources, 'my-1')).toEqual([
      { value: JOB_SERVER, label: "Production (the job's own server)" },
      { value: 'my-2', label: 'Reporting' },
      { value: 'my-4', label: 'Staging' },
    ]);
  });

  it('offers only the job\'s own server when its source is not listed (no sources:read) or has no sibling', () => {
    expect(serverChoicesOf([], 'my-1')).toEqual([{ value: JOB_SERVER, label: "The job's own server" }]);
    expect(serverChoicesOf(sources, 'pg-1')).toEqual([{ value: JOB_SERVER, label: "Cluster (the job's own server)" }]);
  });
});

describe('targets of a binary log job', () => {
  it('names the binary log, not WAL', () => {
    expect(logKindOf('mysql-binlog')).toBe('mysql-binlog');
    expect(logKindOf('postgres-wal')).toBe('postgres-wal');
    expect(logKindOf(undefined)).toBe('postgres-wal');
    expect(logWord('mysql-binlog')).toBe('binary log');
    expect(logWord('postgres-wal')).toBe('WAL');
    expect(checkTarget({ type: 'latest' }, WINDOW, 'UTC', 'mysql-binlog')).toEqual({ ok: true, target: { type: 'latest' }, summary: 'as of the newest archived binary log' });
    expect(checkTarget({ type: 'latest' }, WINDOW, 'UTC')).toMatchObject({ summary: 'as of the newest archived WAL' });
  });

  it('takes a file:offset position as is and refuses an LSN, a bare file or a bad offset', () => {
    expect(checkTarget({ type: 'position', position: ' mysql-bin.000012:4567 ' }, WINDOW, 'UTC', 'mysql-binlog')).toEqual({ ok: true, target: { type: 'position', position: 'mysql-bin.000012:4567' }, summary: 'up to binary log position mysql-bin.000012:4567' });
    for (const position of ['0/3000028', 'mysql-bin.000012', 'mysql-bin.000012:', 'mysql-bin.12:4', 'mysql-bin.000012:-4', ':4567']) {
      expect(checkTarget({ type: 'position', position }, WINDOW, 'UTC', 'mysql-binlog'), position).toEqual({ ok: false, message: 'Enter a binary log position as file:offset, such as mysql-bin.000012:4567' });
    }
    // And a PostgreSQL job still refuses the binary log form.
    expect(checkTarget({ type: 'position', position: 'mysql-bin.000012:4567' }, WINDOW, 'UTC').ok).toBe(false);
  });

  it('refuses a named restore point (PostgreSQL only) and checks times against the window to the second', () => {
    expect(checkTarget({ type: 'name', name: 'before' }, WINDOW, 'UTC', 'mysql-binlog')).toEqual({ ok: false, message: 'Named restore points are PostgreSQL only' });
    expect(checkTarget({ type: 'time', wall: { date: '2026-12-06', time: '13:03:27' } }, WINDOW, 'UTC', 'mysql-binlog').ok).toBe(false);
    expect(checkTarget({ type: 'time', wall: { date: '2026-12-06', time: '13:03:28' } }, WINDOW, 'UTC', 'mysql-binlog')).toMatchObject({ ok: true, target: { type: 'time', time: '2026-12-06T13:03:28+00:00' } });
    expect(checkTarget({ type: 'time', wall: { date: '2026-12-06', time: '14:10:03' } }, WINDOW, 'UTC', 'mysql-binlog').ok).toBe(false);
  });
});

describe('which field a refusal of the API belongs under', () => {
  it('reads the field from the message as the engine words it', () => {
    expect(refusedFieldOf(400, 'Invalid request: body.targetDatabase: may hold letters, digits, "_", "$" and "-" only')).toBe('targetDatabase');
    expect(refusedFieldOf(400, 'Invalid request: body.database: must not be empty')).toBe('database');
    expect(refusedFieldOf(400, 'Invalid request: body.target.position: must be a log position like …')).toBe('target');
    expect(refusedFieldOf(400, 'Invalid request: body.targetSourceId: Too small: expected string to have >=1 characters')).toBe('targetSourceId');
    expect(refusedFieldOf(404, 'targetSourceId "x" is not a stored source configuration')).toBe('targetSourceId');
    expect(refusedFieldOf(409, 'targetSourceId: source "Production" is excluded from restores; choose another server or leave targetSourceId out for the job\'s own')).toBe('targetSourceId');
    expect(refusedFieldOf(422, 'targetSourceId: source "Over SSH" cannot take a point-in-time restore: [source-mysql] invalid configuration: ssh: mode "point-in-time" cannot be combined with ssh')).toBe('targetSourceId');
    expect(refusedFieldOf(403, 'targetSourceId "x": restoring onto another server needs storage:restore on that source')).toBe('targetSourceId');
    // A name taken on the other server stays the new name's refusal.
    expect(refusedFieldOf(409, 'targetDatabase "shop_copy" already exists on Reporting (10.0.0.5:3306); a point-in-time restore only builds a new database: choose another name or drop that one first')).toBe('targetDatabase');
    expect(refusedFieldOf(409, 'targetDatabase "shop_copy" already exists on MariaDB; a point-in-time restore only builds a new database: choose another name or drop that one first')).toBe('targetDatabase');
    expect(refusedFieldOf(422, 'database "shop" is not in base backup jobs/x/base.sql.zst (consistent at 2026-12-06T13:03:27.000Z), the one the target starts from; it holds "crm"')).toBe('database');
    expect(refusedFieldOf(422, 'target time 2026-12-06T12:00:00.000Z is outside the recoverable window: 2026-12-06T13:03:27.400Z – 2026-12-06T14:10:02.900Z')).toBe('target');
    expect(refusedFieldOf(422, 'Job "x" is encrypted with a public-key profile: point-in-time restores of such jobs are not supported through the API yet; restore with the recovery kit')).toBe('general');
    expect(refusedFieldOf(409, 'Job "x" has no recoverable window yet: it needs a base backup followed by unbroken archived log')).toBe('general');
    expect(refusedFieldOf(502, 'the databases of MariaDB could not be listed to check that targetDatabase "x" is new: connect ECONNREFUSED')).toBe('general');
  });
});
