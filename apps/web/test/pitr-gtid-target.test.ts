// The restore dialog's GTID target (issue 44 scope 3), without React: a MariaDB GTID is checked as the API checks it
// (domain-server-sequence, in range; MySQL's uuid:n refused) and sent as { type: 'gtid', gtid }; PostgreSQL jobs never
// send one. Where the API's 400 naming body.target.gtid is shown.
import { describe, expect, it } from 'vitest';
import { refusedFieldOf } from '../src/pitr/mysql-restore-request.js';
import { checkTarget, gtidProblem } from '../src/pitr/restore-target.js';

const WINDOW = { start: '2026-12-06T03:00:00.000Z', end: '2026-12-06T04:00:00.000Z' };

describe('a GTID target in the MySQL/MariaDB restore dialog', () => {
  it('takes one MariaDB GTID (trimmed) and says the transaction is included', () => {
    const checked = checkTarget({ type: 'gtid', gtid: ' 0-1-352 ' }, WINDOW, 'UTC', 'mysql-binlog');
    expect(checked).toEqual({ ok: true, target: { type: 'gtid', gtid: '0-1-352' }, summary: 'up to and including the transaction with GTID 0-1-352' });
    expect(checkTarget({ type: 'gtid', gtid: '4294967295-4294967295-18446744073709551615' }, null, 'UTC', 'mysql-binlog').ok).toBe(true);
  });

  it('refuses what the API refuses, saying why', () => {
    expect(gtidProblem('0-1')).toContain('domain-server-sequence');
    expect(gtidProblem('0-1-352,0-1-353')).toContain('domain-server-sequence');
    expect(gtidProblem('mysql-bin.000004:120')).toContain('domain-server-sequence');
    expect(gtidProblem('3E11FA47-71CA-11E1-9E33-C80AA9429562:23')).toContain("MySQL's GTIDs");
    expect(gtidProblem('0-1-0')).toContain('Out of range');
    expect(gtidProblem('4294967296-1-1')).toContain('Out of range');
    expect(gtidProblem('0-1-18446744073709551616')).toContain('Out of range');
    expect(checkTarget({ type: 'gtid', gtid: 'x' }, WINDOW, 'UTC', 'mysql-binlog').ok).toBe(false);
  });

  it('is MySQL/MariaDB only', () => {
    expect(checkTarget({ type: 'gtid', gtid: '0-1-352' }, WINDOW, 'UTC', 'postgres-wal')).toEqual({ ok: false, message: 'GTID targets are MySQL/MariaDB only' });
  });

  it("shows the API's refusal of a GTID under the target field", () => {
    expect(refusedFieldOf(400, 'Invalid request: body.target.gtid: must be one MariaDB GTID')).toBe('target');
  });
});
