// pg_restore 17 into an older server: its one `SET transaction_timeout` fails and pg_restore exits 1. That error
// alone is a warning; any other error still fails the restore. The stderr below is what pg_restore 17.6 printed
// restoring into PostgreSQL 15 in the container image test (tooling/container/image.test.mjs).
import { describe, expect, it } from 'vitest';
import { harmlessTransactionTimeoutError } from '../src/internal/restore-quirks.js';

const ONLY_TIMEOUT = [
  'pg_restore: error: could not execute query: ERROR:  unrecognized configuration parameter "transaction_timeout"',
  'Command was: SET transaction_timeout = 0;',
  'pg_restore: warning: errors ignored on restore: 1',
].join('\n');

describe('harmlessTransactionTimeoutError', () => {
  it('turns the lone transaction_timeout error into a warning on servers before 17', () => {
    expect(harmlessTransactionTimeoutError(ONLY_TIMEOUT, '15.19 (Debian 15.19-0+deb12u1)')).toMatch(/PostgreSQL 15\.19 does not have/);
  });

  it('leaves the error alone on PostgreSQL 17, where the setting exists', () => {
    expect(harmlessTransactionTimeoutError(ONLY_TIMEOUT, '17.6')).toBeNull();
  });

  it('fails the restore when any other error came with it', () => {
    const more = ONLY_TIMEOUT.replace(
      'pg_restore: warning: errors ignored on restore: 1',
      'pg_restore: error: could not execute query: ERROR:  relation "items" already exists\npg_restore: warning: errors ignored on restore: 2',
    );
    expect(harmlessTransactionTimeoutError(more, '15.19')).toBeNull();
  });

  it('fails the restore when the count does not add up (a stderr tail that lost lines)', () => {
    expect(harmlessTransactionTimeoutError(ONLY_TIMEOUT.replace('restore: 1', 'restore: 3'), '15.19')).toBeNull();
    expect(harmlessTransactionTimeoutError('pg_restore: error: connection to server failed', '15.19')).toBeNull();
  });
});
