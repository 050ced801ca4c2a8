// Issue 44, scope 1 (logical base): a point-in-time source's backup is the consistent dump with the binary log
// coordinates of its snapshot in BaseBackupInfo. The coordinates are checked against the binary log itself: decoded
// from exactly that position, the log holds the rows written after the dump and none written before it.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type BaseBackupStats, type SourceAdapter } from '@holdfast/sdk';
import definition from '../src/index.js';
import { server } from './helpers.js';
import { adminSql, pitrConfig, pitrServer } from './pitr-helpers.js';

const database = `hf_binlog_base_${randomBytes(4).toString('hex')}`;
// "Every user database" is every database the account sees: an account of this file's own, granted on its database
// only, so other files' databases (created and dropped on the shared server meanwhile) are not in its dump.
const account = { user: `hf_base_${randomBytes(3).toString('hex')}`, password: randomBytes(12).toString('hex') };

beforeAll(async () => {
  await adminSql(`CREATE DATABASE ${database}`);
  await adminSql(`CREATE USER '${account.user}'@'%' IDENTIFIED BY '${account.password}'`);
  await adminSql(`GRANT RELOAD, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '${account.user}'@'%'`);
  await adminSql(`GRANT SELECT, SHOW VIEW, TRIGGER, EVENT, LOCK TABLES ON \`${database}\`.* TO '${account.user}'@'%'`);
  await adminSql(`CREATE TABLE ${database}.marks (id INT AUTO_INCREMENT PRIMARY KEY, label VARCHAR(100)) ENGINE=InnoDB`);
  await adminSql(`INSERT INTO ${database}.marks (label) VALUES ('before-the-base')`);
});

afterAll(async () => {
  await adminSql(`DROP DATABASE IF EXISTS ${database}`);
  await adminSql(`DROP USER IF EXISTS '${account.user}'@'%'`);
});

function source(): SourceAdapter {
  return instantiateAdapter(container, definition, { ...pitrConfig('binlog') });
}

describe('logical base backup with binary log coordinates', () => {
  it('records the snapshot coordinates; the binary log from there holds later rows only', async () => {
    const handle = await source().dump({ databases: [database], signal: new AbortController().signal });
    const chunks: Buffer[] = [];
    await pipeline(handle.stream, new Writable({ write: (chunk: Buffer, _e, cb) => (chunks.push(chunk), cb()) }));
    const stats = (await handle.done) as BaseBackupStats;
    const script = Buffer.concat(chunks).toString('utf8');
    await adminSql(`INSERT INTO ${database}.marks (label) VALUES ('after-the-base')`);

    expect(stats.base).toMatchObject({ logKind: 'mysql-binlog', timeline: 1, serverVersion: expect.stringMatching(/^10\.11\./) });
    const [file, position] = stats.base.startPosition.split(':');
    expect(stats.base.startSegment).toBe(file);
    expect(stats.base.stopPosition).toBe(stats.base.startPosition);
    expect(Number(position)).toBeGreaterThanOrEqual(4);
    expect(script).toContain(`MASTER_LOG_FILE='${file}', MASTER_LOG_POS=${position}`);
    expect(script).toContain('before-the-base');
    expect(stats.base.consistentAt.getTime()).toBeGreaterThanOrEqual(stats.base.startedAt.getTime());

    // Decode the binary log from the recorded position on (ROW events as pseudo-SQL): the later row, not the earlier.
    const { user, password } = pitrServer.users.binlog;
    const decoded = execFileSync(
      'mariadb-binlog',
      ['--no-defaults', '--host', pitrServer.host, '--port', String(pitrServer.port), '--user', user, `--password=${password}`, '--skip-ssl', '--read-from-remote-server', '--to-last-log', `--start-position=${position}`, '--verbose', file!],
      { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
    );
    expect(decoded).toContain('after-the-base');
    expect(decoded).not.toContain('before-the-base');
  }, 60_000);

  it('pointInTime().baseBackup takes the same kind of base of every user database', async () => {
    const own = instantiateAdapter(container, definition, { ...pitrConfig('binlog', account) });
    const handle = await own.pointInTime!()!.baseBackup({ signal: new AbortController().signal });
    let bytes = 0;
    await pipeline(handle.stream, new Writable({ write: (chunk: Buffer, _e, cb) => ((bytes += chunk.length), cb()) }));
    const stats = await handle.done;
    expect(stats.bytes).toBe(bytes);
    expect(stats.databases).toEqual([database]);
    expect(stats.base.startPosition).toMatch(/^mysql-bin\.\d{6}:\d+$/);
  }, 60_000);

  it('is refused before any byte on a server without binary logging (the machine MariaDB on 3306)', async () => {
    const adapter = instantiateAdapter(container, definition, { ...server, mode: 'point-in-time', tls: 'disable' });
    const error = await adapter.dump({ databases: [], signal: new AbortController().signal }).catch((caught: unknown) => caught);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toContain('binary logging is off on 127.0.0.1:3306 (log_bin)');
  });
});
