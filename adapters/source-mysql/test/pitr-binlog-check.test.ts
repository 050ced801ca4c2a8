// Issue 44, acceptance 5: test-connection of a point-in-time MySQL/MariaDB source names exactly what streaming the
// binary log is missing. Against the MariaDB PITR test server (127.0.0.1:3307: log_bin, server_id 1, ROW) and its
// accounts with and without replication privileges, and the machine's own MariaDB (3306), whose binary log is off.
import { container } from 'tsyringe';
import { afterEach, describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type SourceAdapter } from '@holdfast/sdk';
import definition from '../src/index.js';
import { mysqlSourceConfig } from '../src/config.js';
import { binlogProblems, checkBinlog } from '../src/internal/pitr/binlog-check.js';
import { server } from './helpers.js';
import { adminSql, pitrConfig, pitrServer } from './pitr-helpers.js';

function source(config: Record<string, unknown>): SourceAdapter {
  return instantiateAdapter(container, definition, config);
}

const atServer = `${pitrServer.host}:${pitrServer.port}`;

afterEach(async () => {
  // Global settings a test changed go back (the launcher also resets them at every start).
  await adminSql('SET GLOBAL server_id = 1');
  await adminSql("SET GLOBAL binlog_format = 'ROW'");
});

describe('binary log check (point-in-time mode)', () => {
  it('accepts the replication account: every setting and privilege in place, the dump probe accepted', async () => {
    const check = await checkBinlog(pitrConfig('binlog'));
    expect(check.problems).toEqual([]);
    expect(check).toMatchObject({ ready: true, logBin: true, serverId: 1, binlogFormat: 'ROW', binlogRowImage: 'FULL', canListBinlogs: true, canReadBinlog: true, probe: { accepted: true } });
    expect(check.binlogs.length).toBeGreaterThan(0);
    // The server keeps the default 1 GiB max_binlog_size: the only warning is about the size of each flush.
    expect(check.warnings).toHaveLength(1);
    expect(check.warnings[0]).toMatch(/^max_binlog_size is 1024 MiB on 127\.0\.0\.1:3307/);

    const health = await source({ ...pitrConfig('binlog') }).check();
    expect(health.ok).toBe(true);
    expect(health.message).toMatch(/ready for point-in-time recovery \(binary log mysql-bin\.\d{6}, binlog_format ROW, server_id 1/);
  });

  it('names both missing replication privileges, with the GRANT to run, and test-connection fails', async () => {
    const check = await checkBinlog(pitrConfig('noRepl'));
    const grantee = `'${pitrServer.users.noRepl.user}'@'%'`;
    expect(check.problems).toEqual([
      `account ${grantee} lacks the REPLICATION SLAVE privilege, which reading the binary log as a replica needs: run GRANT REPLICATION SLAVE ON *.* TO ${grantee}; as an administrator.`,
      `account ${grantee} lacks the REPLICATION CLIENT privilege (BINLOG MONITOR on MariaDB 10.5 and later), which SHOW BINARY LOGS needs (the stream lists the server's binary logs to resume and to notice purged ones): run GRANT REPLICATION CLIENT ON *.* TO ${grantee}; as an administrator.`,
    ]);
    expect(check.ready).toBe(false);

    const health = await source({ ...pitrConfig('noRepl') }).check();
    expect(health.ok).toBe(false);
    expect(health.message).toContain('but point-in-time recovery is not possible yet: account');
    expect(health.message).toContain('GRANT REPLICATION SLAVE ON *.*');
    expect(health.message).toContain('GRANT REPLICATION CLIENT ON *.*');
    expect(health.message).not.toContain(pitrServer.users.noRepl.password);
  });

  it('names only REPLICATION SLAVE when the account can list the logs: the server refused the dump probe itself', async () => {
    const check = await checkBinlog(pitrConfig('noSlave'));
    expect(check.canListBinlogs).toBe(true);
    expect(check.probe.accepted).toBe(false);
    expect(check.problems).toHaveLength(1);
    expect(check.problems[0]).toMatch(/^account 'holdfast_noslave'@'%' lacks the REPLICATION SLAVE privilege/);
  });

  it('names binary logging off on a server without log_bin (the machine MariaDB on 3306)', async () => {
    const check = await checkBinlog(mysqlSourceConfig.parse({ mode: 'point-in-time', ...server, password: '', tls: 'disable' }));
    expect(check.logBin).toBe(false);
    expect(check.problems).toEqual([
      `binary logging is off on ${server.host}:${server.port} (log_bin); point-in-time recovery streams the binary log: set log_bin = mysql-bin and server_id in the [mysqld] section of the server's configuration and restart the server.`,
    ]);
    expect(check.warnings).toEqual([]);
  });

  it('names server_id 0 (MySQL allows it; MariaDB 10.11 itself refuses it, so the sentence is checked on the reading)', async () => {
    // MariaDB's minimum is 1: SET GLOBAL server_id = 0 is truncated with a warning, the server keeps 1.
    await adminSql('SET GLOBAL server_id = 0');
    const reading = await checkBinlog(pitrConfig('binlog'));
    expect(reading.serverId).toBe(1);
    expect(reading.problems).toEqual([]);
    // The same reading as a MySQL server with server_id 0 would give it.
    const problems = binlogProblems({ host: pitrServer.host, port: pitrServer.port, user: 'holdfast_binlog' }, { ...reading, serverId: 0 });
    expect(problems).toEqual([
      `server_id is 0 on ${atServer}; a binary log that replicas and Holdfast read needs a server_id above 0 (replicas refuse a primary whose server_id is 0): set server_id to a unique number above 0 (SET GLOBAL server_id = 1, and in the configuration so a restart keeps it).`,
    ]);
  });

  it('warns (and still accepts) when binlog_format is not ROW: statement events replay, not always exactly', async () => {
    await adminSql("SET GLOBAL binlog_format = 'MIXED'");
    const check = await checkBinlog(pitrConfig('binlog'));
    expect(check.ready).toBe(true);
    expect(check.warnings[0]).toMatch(/^binlog_format is MIXED on 127\.0\.0\.1:3307: statement events replay, .* set binlog_format = ROW/);
    const health = await source({ ...pitrConfig('binlog') }).check();
    expect(health.ok).toBe(true);
    expect(health.message).toContain('Warning: binlog_format is MIXED');
  });

  it('a wrong password fails the ordinary connection first (AUTH, no password in the message)', async () => {
    const error = await checkBinlog(pitrConfig('binlog', { password: 'wrong-password-x' })).catch((caught: unknown) => caught);
    expect(isAdapterError(error) && error.code).toBe('AUTH');
    expect((error as Error).message).not.toContain('wrong-password-x');
  });
});

describe('point-in-time mode of the source', () => {
  it('is refused with ssh, and is off by default (pointInTime() null)', () => {
    const ssh = { host: 'db', username: 'u', hostKeySha256: 'SHA256:MJkatcxczl4CtU4SKyQA6qEDIWoKoQ2230I3em0+Aig' };
    const parsed = mysqlSourceConfig.safeParse({ mode: 'point-in-time', user: 'u', ssh });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain('mode \\"point-in-time\\" cannot be combined with ssh');
    expect(source({ ...server }).pointInTime?.()).toBeNull();
  });

  it('offers the binary log stream, base backups and the restore to an instant (which refuses an input without database)', async () => {
    const support = source({ ...pitrConfig('binlog') }).pointInTime?.();
    expect(support?.logKind).toBe('mysql-binlog');
    const error = await support!.restoreToPoint({} as never).catch((caught: unknown) => caught);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toContain('needs database { name, into }');
  });
});
