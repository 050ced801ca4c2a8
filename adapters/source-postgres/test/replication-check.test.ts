// Issue 43, acceptance 7: a source without replication privilege gets a test result naming the privilege or the
// pg_hba.conf line that is missing. Against real servers: the PITR cluster of the test services (127.0.0.1:5433,
// wal_level=replica, one `host replication` line for holdfast_repl), the machine's own cluster (5432, trust auth, no
// replication line at all) and a throwaway cluster started here with wal_level=minimal.
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter } from '@holdfast/sdk';
import definition from '../src/index.js';
import { postgresSourceConfig } from '../src/config.js';
import { checkReplication, hbaLineFor, replicationProblems, replicationWarnings } from '../src/internal/replication-check.js';
import { server } from './helpers.js';

interface PitrState {
  host: string;
  port: number;
  roles: Record<'repl' | 'norepl' | 'replNoHba', { user: string; password: string }>;
}
// Written by tooling/test-services/postgres-pitr.mjs, which this package's vitest globalSetup runs.
const pitr = JSON.parse(readFileSync('/tmp/holdfast-test-services/postgres-pitr/postgres-pitr.json', 'utf8')) as PitrState;

function pitrConfig(role: keyof PitrState['roles']) {
  const { user, password } = pitr.roles[role];
  return postgresSourceConfig.parse({ host: pitr.host, port: pitr.port, user, password, connectTimeoutSeconds: 5 });
}

describe('replication check against the PITR test cluster (wal_level=replica)', () => {
  it('passes for the role with REPLICATION and its pg_hba.conf replication line, and identifies the system', async () => {
    const check = await checkReplication(pitrConfig('repl'));
    expect(check.problems).toEqual([]);
    expect(check.ready).toBe(true);
    expect(check.walLevel).toBe('replica');
    expect(check.maxWalSenders).toBeGreaterThanOrEqual(2);
    expect(check.connection).toMatchObject({ accepted: true, timeline: 1 });
    expect(check.connection.accepted && check.connection.systemIdentifier).toMatch(/^\d{10,}$/);
    // The test cluster caps its slots (max_slot_wal_keep_size = 1GB): nothing to warn about.
    expect(check.maxSlotWalKeepSize).toBe('1GB');
    expect(check.warnings).toEqual([]);
  });

  it('names the missing REPLICATION privilege (and the replication line) for a role without it', async () => {
    const check = await checkReplication(pitrConfig('norepl'));
    expect(check.ready).toBe(false);
    expect(check.roleCanReplicate).toBe(false);
    expect(check.problems).toEqual([
      'role "holdfast_norepl" lacks the REPLICATION privilege: run ALTER ROLE "holdfast_norepl" REPLICATION; as a superuser (or connect as a role that has it).',
      expect.stringContaining('add "host replication holdfast_norepl 127.0.0.1/32 scram-sha-256" and reload PostgreSQL'),
    ]);
  });

  it('names the exact pg_hba.conf line for a role that has REPLICATION but no replication line', async () => {
    const check = await checkReplication(pitrConfig('replNoHba'));
    expect(check.roleCanReplicate).toBe(true);
    expect(check.connection).toMatchObject({ accepted: false, missingHbaLine: 'host replication holdfast_repl_nohba 127.0.0.1/32 scram-sha-256' });
    expect(check.problems).toEqual([
      `pg_hba.conf on 127.0.0.1:${pitr.port} has no line allowing replication connections for role "holdfast_repl_nohba" (a line whose database is "all" does not cover them): add "host replication holdfast_repl_nohba 127.0.0.1/32 scram-sha-256" and reload PostgreSQL (SELECT pg_reload_conf()).`,
    ]);
  });

  it('keeps the ordinary connection failure of a wrong password (an AUTH error without the password)', async () => {
    const config = postgresSourceConfig.parse({ ...pitrConfig('repl'), password: 'wrong-secret-123' });
    const failure = await checkReplication(config).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'AUTH' });
    expect(String((failure as Error).message)).not.toContain('wrong-secret-123');
  });
});

describe('test-connection with checkReplication (off by default)', () => {
  const adapter = (role: keyof PitrState['roles'], overrides: Record<string, unknown> = {}) =>
    instantiateAdapter(container, definition, { host: pitr.host, port: pitr.port, ...pitr.roles[role], ...overrides });

  it('without the flag, a role without REPLICATION still connects as before', async () => {
    const result = await adapter('norepl').check();
    expect(result.ok).toBe(true);
    expect(result.message).toMatch(/^Connected to PostgreSQL 15\.\d+/);
    expect(result.message).not.toContain('replication');
  });

  it('with the flag, the missing privilege and pg_hba.conf line fail the test with their sentences', async () => {
    const result = await adapter('norepl', { checkReplication: true }).check();
    expect(result.ok).toBe(false);
    expect(result.message).toContain('but point-in-time recovery is not possible yet: role "holdfast_norepl" lacks the REPLICATION privilege');
    expect(result.message).toContain('add "host replication holdfast_norepl 127.0.0.1/32 scram-sha-256"');
  });

  it('with the flag, a ready role passes and says so', async () => {
    const result = await adapter('repl', { checkReplication: true }).check();
    expect(result).toMatchObject({ ok: true, message: expect.stringContaining('ready for point-in-time recovery (wal_level replica, replication connection accepted)') });
  });
});

describe('replication check against the machine cluster (5432: superuser, trust, no replication line)', () => {
  it('a superuser counts as privileged, and "host all all" does not cover replication: the line is named', async () => {
    const check = await checkReplication(postgresSourceConfig.parse({ ...server }));
    expect(check.roleCanReplicate).toBe(true);
    expect(check.connection).toMatchObject({ accepted: false, missingHbaLine: `host replication ${server.user} 127.0.0.1/32 scram-sha-256` });
    expect(check.problems).toHaveLength(1);
  });
});

// A cluster with wal_level=minimal cannot be had from the shared servers, so one is created for this test (about 1 s).
const initdb = '/usr/lib/postgresql/15/bin/initdb';
const canStartCluster = process.getuid?.() === 0 && existsSync(initdb);
describe.skipIf(!canStartCluster)('replication check against a throwaway cluster with wal_level=minimal (needs root and PostgreSQL 15 binaries)', () => {
  let directory = '';
  const data = () => join(directory, 'data');
  const port = 5439;
  const asPostgres = (command: string, args: string[]) =>
    spawnSync('runuser', ['-u', 'postgres', '--', `/usr/lib/postgresql/15/bin/${command}`, ...args], { encoding: 'utf8', timeout: 60_000 });

  beforeAll(() => {
    const taken = spawnSync('ss', ['-Hltn', `sport = :${port}`], { encoding: 'utf8' }).stdout.trim();
    if (taken) throw new Error(`port ${port} is taken; the wal_level=minimal test cluster needs it`);
    directory = mkdtempSync(join(tmpdir(), 'hf-pg-minimal-'));
    chownSync(directory, Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout), 0);
    const init = asPostgres('initdb', ['-D', data(), '-U', 'root', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8']);
    if (init.status !== 0) throw new Error(`initdb: ${init.stderr}`);
    const settings = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${directory} -c wal_level=minimal -c max_wal_senders=0 -c max_replication_slots=0 -c fsync=off`;
    const start = asPostgres('pg_ctl', ['-D', data(), '-o', settings, '-l', join(directory, 'log'), '-w', 'start']);
    if (start.status !== 0) throw new Error(`pg_ctl start: ${start.stderr} ${start.stdout}`);
  }, 60_000);

  afterAll(() => {
    if (!directory) return;
    asPostgres('pg_ctl', ['-D', data(), '-m', 'immediate', '-w', 'stop']);
    rmSync(directory, { recursive: true, force: true });
  });

  it('reports wal_level, no WAL senders and no slots as three sentences, and does not repeat the server refusal', async () => {
    const check = await checkReplication(postgresSourceConfig.parse({ host: '127.0.0.1', port, user: 'root' }));
    expect(check.walLevel).toBe('minimal');
    expect(check.connection.accepted).toBe(false);
    expect(check.problems).toEqual([
      `wal_level is "minimal" on 127.0.0.1:${port}; point-in-time recovery needs "replica" (or "logical"): set wal_level = replica in postgresql.conf and restart PostgreSQL.`,
      `max_wal_senders is 0 on 127.0.0.1:${port}; the WAL stream and a base backup each hold a WAL sender: set max_wal_senders to at least 2 (10 is usual) and restart PostgreSQL.`,
      `max_replication_slots is 0 on 127.0.0.1:${port}; Holdfast keeps the WAL it has not archived yet with a replication slot: set max_replication_slots to at least 1 (10 is usual) and restart PostgreSQL.`,
    ]);
    // initdb's pg_hba.conf has replication lines, so the server refused for want of a WAL sender, already said above.
    expect(check.connection.accepted === false && check.connection.serverMessage).toMatch(/max_wal_senders/);
    // initdb leaves max_slot_wal_keep_size at -1: a risk, named as a warning rather than a problem.
    expect(check.maxSlotWalKeepSize).toBe('-1');
    expect(check.warnings).toEqual([
      `max_slot_wal_keep_size is -1 (unlimited) on 127.0.0.1:${port}: if the WAL stream stops, the replication slot keeps WAL until the server's disk is full; set it (for example max_slot_wal_keep_size = 50GB) and reload PostgreSQL.`,
    ]);
  });
});

describe('pg_hba.conf line and problem wording', () => {
  it('uses /128 for an IPv6 client, quotes a role name that needs it, and a local line for a Unix socket', () => {
    expect(hbaLineFor('no pg_hba.conf entry for replication connection from host "::1", user "x", no encryption', 'backup')).toBe(
      'host replication backup ::1/128 scram-sha-256',
    );
    expect(hbaLineFor('pg_hba.conf rejects replication connection for host "10.0.0.7", user "Backup Role"', 'Backup Role')).toBeUndefined();
    expect(hbaLineFor('pg_hba.conf rejects replication connection from host "10.0.0.7", user "Backup Role"', 'Backup Role')).toBe(
      'host replication "Backup Role" 10.0.0.7/32 scram-sha-256',
    );
    expect(hbaLineFor('no pg_hba.conf entry for replication connection from host "[local]", user "x"', 'x')).toBe('local replication x scram-sha-256');
    expect(hbaLineFor('password authentication failed for user "x"', 'x')).toBeUndefined();
  });

  it('warns about an unlimited slot or a server without the cap, not about a capped one', () => {
    const server = { host: 'db', port: 5432 };
    expect(replicationWarnings(server, { maxSlotWalKeepSize: '50GB' })).toEqual([]);
    expect(replicationWarnings(server, { maxSlotWalKeepSize: '-1' })[0]).toMatch(/^max_slot_wal_keep_size is -1 \(unlimited\) on db:5432/);
    expect(replicationWarnings(server, {})[0]).toMatch(/PostgreSQL before 13/);
  });

  it('reports an unexplained refusal in the server words', () => {
    const problems = replicationProblems(
      { host: 'db', port: 5432, user: 'backup' },
      { walLevel: 'logical', maxWalSenders: 10, maxReplicationSlots: 10, roleCanReplicate: true },
      { accepted: false, serverMessage: 'password authentication failed for user "backup"' },
    );
    expect(problems).toEqual(['db:5432 refused a replication connection as "backup": password authentication failed for user "backup"']);
  });
});
