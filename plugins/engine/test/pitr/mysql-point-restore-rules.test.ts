// The rules of MySQL/MariaDB point-in-time jobs that need no server (issue 44): binary log positions and their
// order, the database names a restore takes, the base a binary log position starts from, and that the window,
// retention, the gauges' kind and the segment keys work on binary log file names. The route is in
// point-restore-mysql.test.ts, the real restores in mysql-pitr-end-to-end.test.ts.
import { describe, expect, it } from 'vitest';
import type { ArchivedPiece, RecordedBase } from '../../src/pitr/change-log-store.js';
import { kindOfPieceNames } from '../../src/pitr/log-naming.js';
import { recoveryWindow, type WindowPiece } from '../../src/pitr/recovery-window.js';
import { chooseBase } from '../../src/pitr/restore/choose-base.js';
import { binlogPositionValue, isPositionOf } from '../../src/pitr/restore/log-positions.js';
import { mysqlDatabaseNameProblem, reservedTargetProblem } from '../../src/pitr/restore/mysql-database-name.js';
import { pointRestoreBodySchema } from '../../src/pitr/restore/point-restore-request.js';
import { segmentKey } from '../../src/pitr/segment-key.js';
import { piecesToPrune } from '../../src/pitr/wal-retention.js';

const at = (second: number) => new Date(Date.UTC(2026, 11, 6, 3, 0, second));
const file = (n: number) => `mysql-bin.${String(n).padStart(6, '0')}`;

function base(id: string, position: string, second: number, destinations = ['a']): RecordedBase {
  return {
    executionId: id,
    jobId: 'job',
    storageKey: `${id}.sql.zst.enc`,
    logKind: 'mysql-binlog',
    startPosition: position,
    stopPosition: position,
    startSegment: position.split(':')[0]!,
    timeline: 1,
    systemId: 'db1:server_id=1',
    serverVersion: '10.11.19-MariaDB',
    startedAt: at(second - 1),
    consistentAt: at(second),
    destinations,
  };
}

const windowPiece = (n: number, second: number, partial = false): WindowPiece => ({ name: file(n), timeline: 1, partial, coversUntil: at(second), storedSize: 100, plainSize: 1000 });

describe('binary log positions', () => {
  it('are file:offset with a numbered file, and are told apart from PostgreSQL positions', () => {
    expect(isPositionOf('mysql-binlog', 'mysql-bin.000042:1234')).toBe(true);
    expect(isPositionOf('mysql-binlog', 'host-7_bin.1000000:4')).toBe(true);
    expect(isPositionOf('mysql-binlog', '0/3000028')).toBe(false);
    expect(isPositionOf('mysql-binlog', 'mysql-bin.000042')).toBe(false);
    expect(isPositionOf('mysql-binlog', 'mysql-bin.42:4')).toBe(false);
    expect(isPositionOf('mysql-binlog', '../x.000001:4')).toBe(false);
    expect(isPositionOf('postgres-wal', 'mysql-bin.000042:1234')).toBe(false);
    expect(isPositionOf('postgres-wal', '0/3000028')).toBe(true);
  });

  it('order by file number first, then offset (not as text)', () => {
    expect(binlogPositionValue('mysql-bin.000010:4') > binlogPositionValue('mysql-bin.000009:999999999')).toBe(true);
    expect(binlogPositionValue('mysql-bin.1000000:4') > binlogPositionValue('mysql-bin.999999:4')).toBe(true);
    expect(binlogPositionValue('mysql-bin.000009:1235') > binlogPositionValue('mysql-bin.000009:1234')).toBe(true);
  });

  it('choose the newest base at or before a position, and refuse one before the oldest base', () => {
    const window = { start: at(0), end: at(50), baseExecutionId: 'first', timeline: 1 };
    const bases = [base('first', `${file(3)}:1234`, 0), base('second', `${file(9)}:4`, 30)];
    expect(chooseBase(window, bases, { type: 'position', position: `${file(9)}:4` }).executionId).toBe('second');
    expect(chooseBase(window, bases, { type: 'position', position: `${file(8)}:99999` }).executionId).toBe('first');
    expect(chooseBase(window, bases, { type: 'position', position: `${file(10)}:4` }).executionId).toBe('second');
    expect(() => chooseBase(window, bases, { type: 'position', position: `${file(3)}:1233` })).toThrow(/mysql-bin\.000003:1234/);
    expect(chooseBase(window, bases, { type: 'time', time: at(29).toISOString() }).executionId).toBe('first');
  });
});

describe('database names of a MySQL restore', () => {
  it('take 1 to 64 letters, digits, _, $ and - (64 characters, not bytes)', () => {
    for (const name of ['shop', 'shop_copy', 'Shop-2026$x', 'é'.repeat(64), 'a']) expect(mysqlDatabaseNameProblem(name), name).toBeUndefined();
  });

  it('refuse what MySQL or the replay cannot take, saying why', () => {
    expect(mysqlDatabaseNameProblem('')).toContain('empty');
    expect(mysqlDatabaseNameProblem('n'.repeat(65))).toContain('65 characters');
    expect(mysqlDatabaseNameProblem('shop ')).toContain('ends with a space');
    expect(mysqlDatabaseNameProblem('sh\u0000op')).toContain('control character');
    for (const name of ['a`b', 'a/b', 'a\\b', "a'b", 'a"b']) expect(mysqlDatabaseNameProblem(name), name).toContain('backtick');
    expect(mysqlDatabaseNameProblem('a->b')).toContain('--rewrite-db');
    expect(mysqlDatabaseNameProblem('shop.v2')).toContain('letters, digits');
    expect(mysqlDatabaseNameProblem('shop copy')).toContain('letters, digits');
  });

  it('never restore into a system schema or a restore work schema', () => {
    expect(reservedTargetProblem('MySQL')).toContain('system schema');
    expect(reservedTargetProblem('performance_schema')).toContain('system schema');
    expect(reservedTargetProblem('shop__holdfast_staging_0a1b2c3d')).toContain('work schema');
    expect(reservedTargetProblem('shop_copy')).toBeUndefined();
  });

  it('are checked by the body schema, which also takes both position forms', () => {
    const parse = (body: unknown) => pointRestoreBodySchema.safeParse(body);
    expect(parse({ target: { type: 'position', position: `${file(4)}:120` }, database: 'shop', targetDatabase: 'shop_copy' }).success).toBe(true);
    expect(parse({ target: { type: 'latest' }, database: 'shop', targetDatabase: 'a`b' }).success).toBe(false);
    expect(parse({ target: { type: 'latest' }, database: 'sh/op', targetDatabase: 'copy' }).success).toBe(false);
    expect(parse({ target: { type: 'position', position: 'mysql-bin:4' }, database: 'shop', targetDatabase: 'copy' }).success).toBe(false);
  });
});

describe('the engine on binary log file names', () => {
  it('computes the window and its gaps from the files\' numbers', () => {
    const bases = [{ executionId: 'b1', startSegment: file(3), timeline: 1, consistentAt: at(1) }];
    const whole = recoveryWindow({ kind: 'mysql-binlog', bases, pieces: [windowPiece(3, 5), windowPiece(4, 10), windowPiece(5, 20, true)], now: at(25) });
    expect(whole.window).toEqual({ start: at(1), end: at(20), baseExecutionId: 'b1', timeline: 1 });
    expect(whole.recoveryPointSeconds).toBe(5);
    const holed = recoveryWindow({ kind: 'mysql-binlog', bases, pieces: [windowPiece(3, 5), windowPiece(5, 10), windowPiece(6, 20, true)], now: at(25) });
    expect(holed.gaps).toEqual([{ after: file(3), next: file(5), missing: 1 }]);
    expect(holed.window).toBeNull();
  });

  it('prunes files before the oldest retained base\'s start file', () => {
    const piece = (name: string): ArchivedPiece => ({ id: 1, jobId: 'j', name, timeline: 1, partial: false, storageKey: name, plainSize: 1, storedSize: 1, sha256: '', coversUntil: at(0), archivedAt: at(0), destinations: ['d'] });
    const pieces = [file(8), file(9), file(10), file(11)].map(piece);
    expect(piecesToPrune('mysql-binlog', [{ startSegment: file(10), timeline: 1 }], pieces).map((p) => p.piece.name)).toEqual([file(8), file(9)]);
  });

  it('tells the kind of a job without a base from its pieces, and keys binary log files like segments', () => {
    expect(kindOfPieceNames([file(3)])).toBe('mysql-binlog');
    expect(kindOfPieceNames(['000000010000000000000003'])).toBe('postgres-wal');
    expect(kindOfPieceNames([])).toBe('postgres-wal');
    expect(segmentKey({ jobId: 'job', timeline: 1, name: file(3), partial: true, codec: 'ZSTD', isEncrypted: true })).toBe('pitr/job/wal/00000001/mysql-bin.000003.partial.zst.enc');
  });
});
