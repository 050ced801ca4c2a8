// Issue 13 acceptance 2 through the whole product: for PostgreSQL, MariaDB, Redis and SQLite, a wrong password, an
// unreachable host, a missing dump tool and an unknown database each fail the run before any upload, the error names
// the cause, and no object is left on either destination (a local folder and a real SFTP server). A last run of a
// good source proves both destinations were writable all along, so "empty" means "nothing was written".
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

const run = promisify(execFile);
const SSHD = JSON.parse(await readFile('/tmp/holdfast-test-services/sshd/sshd.json', 'utf8')) as {
  host: string;
  port: number;
  user: string;
  password: string;
  hostKeySha256: string;
  home: string;
};

/** Every file below `dir`, relative, sorted. */
async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

interface Case {
  engine: string;
  cause: 'wrong password' | 'unreachable host' | 'missing dump tool' | 'unknown database';
  adapterId: string;
  config: Record<string, unknown>;
  databases: string[];
  /** What the run's error must say. */
  error: RegExp;
}

describe('a source that cannot dump fails the run before any upload, leaving no object on any destination (sqlite)', () => {
  let server: FullServer;
  let admin: Caller;
  let localDir: string;
  let emptyBin: string;
  let sqliteDir: string;
  const sftpRoot = join(SSHD.home, `source-failures-${Date.now()}`);
  const destinations: string[] = [];

  const call = async (method: string, path: string, body?: unknown, status = 200) => {
    const answer = await server.call(method, path, admin, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(status);
    return answer.body;
  };

  async function runJob(name: string, adapterId: string, config: Record<string, unknown>, databases: string[]): Promise<any> {
    const source = await call('POST', '/api/adapters', { name: `${name} source`, type: 'database', adapterId, config }, 201);
    const job = await call('POST', '/api/jobs', { name, schedule: '0 3 * * *', sourceId: source.id, databases, compression: 'GZIP', destinations: destinations.map((configId, priority) => ({ configId, priority })) }, 201);
    const { executionId } = await call('POST', `/api/jobs/${job.id}/run`, {});
    const deadline = Date.now() + 60_000;
    for (;;) {
      const answer = await call('GET', `/api/executions/${executionId}?includeLogs=true`);
      if (!['Pending', 'Running'].includes(answer.data.status)) return answer.data;
      if (Date.now() > deadline) throw new Error(`${name}: execution still ${answer.data.status}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }

  beforeAll(async () => {
    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    localDir = await mkdtemp(join(tmpdir(), 'holdfast-srcfail-local-'));
    // A directory without any tool in it: what an operator gets from a wrong binDirectory.
    emptyBin = await mkdtemp(join(tmpdir(), 'holdfast-srcfail-bin-'));
    sqliteDir = await mkdtemp(join(tmpdir(), 'holdfast-srcfail-sqlite-'));
    execFileSync('sqlite3', [join(sqliteDir, 'live.sqlite'), "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) VALUES ('a'), ('b');"]);
    await run('install', ['-d', '-o', SSHD.user, '-g', SSHD.user, sftpRoot]);
    const local = await call('POST', '/api/adapters', { name: 'local disk', type: 'storage', adapterId: 'local', config: { path: localDir } }, 201);
    const sftp = await call('POST', '/api/adapters', { name: 'offsite sftp', type: 'storage', adapterId: 'sftp', config: { host: SSHD.host, port: SSHD.port, username: SSHD.user, password: SSHD.password, root: sftpRoot } }, 201);
    destinations.push(local.id, sftp.id);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    for (const dir of [localDir, emptyBin, sqliteDir, sftpRoot]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  // A generous handshake bound: the refused cases answer at once (wrong password, closed port), and on a loaded CI
  // machine sshd's key exchange alone took more than 3 s.
  const ssh = () => ({ host: SSHD.host, port: SSHD.port, username: SSHD.user, hostKeySha256: SSHD.hostKeySha256, connectTimeoutSeconds: 30 });
  const cases = (): Case[] => [
    // PostgreSQL trusts 127.0.0.1 here, so the refused login is a role that does not exist.
    { engine: 'PostgreSQL', cause: 'wrong password', adapterId: 'postgres', config: { host: '127.0.0.1', user: 'hf_no_such_role', password: 'Wrong-Pw-1' }, databases: ['postgres'], error: /cannot connect to 127\.0\.0\.1:5432 as hf_no_such_role: .*does not exist/ },
    { engine: 'PostgreSQL', cause: 'unreachable host', adapterId: 'postgres', config: { host: '127.0.0.1', port: 1, user: 'root', connectTimeoutSeconds: 2 }, databases: ['postgres'], error: /cannot connect to 127\.0\.0\.1:1 / },
    { engine: 'PostgreSQL', cause: 'missing dump tool', adapterId: 'postgres', config: { host: '127.0.0.1', user: 'root', binDirectory: emptyBin }, databases: ['postgres'], error: /pg_dump was not found/ },
    { engine: 'PostgreSQL', cause: 'unknown database', adapterId: 'postgres', config: { host: '127.0.0.1', user: 'root' }, databases: ['hf_no_such_db'], error: /unknown database "hf_no_such_db" on 127\.0\.0\.1:5432/ },
    { engine: 'MariaDB', cause: 'wrong password', adapterId: 'mysql', config: { host: '127.0.0.1', user: 'root', password: 'Wrong-Pw-1' }, databases: ['mysql'], error: /cannot connect to 127\.0\.0\.1:3306 as root: Access denied/ },
    { engine: 'MariaDB', cause: 'unreachable host', adapterId: 'mysql', config: { host: '127.0.0.1', port: 1, user: 'root', connectTimeoutSeconds: 2 }, databases: ['mysql'], error: /cannot connect to 127\.0\.0\.1:1 .*ECONNREFUSED/ },
    { engine: 'MariaDB', cause: 'missing dump tool', adapterId: 'mysql', config: { host: '127.0.0.1', user: 'root', binDirectory: emptyBin }, databases: ['mysql'], error: /neither mariadb-dump nor mysqldump was found/ },
    { engine: 'MariaDB', cause: 'unknown database', adapterId: 'mysql', config: { host: '127.0.0.1', user: 'root' }, databases: ['hf_no_such_db'], error: /unknown database "hf_no_such_db" on 127\.0\.0\.1:3306/ },
    { engine: 'Redis', cause: 'wrong password', adapterId: 'redis', config: { host: '127.0.0.1', username: 'hf_no_such_user', password: 'Wrong-Pw-1' }, databases: [], error: /cannot log in to 127\.0\.0\.1:6379 as hf_no_such_user: WRONGPASS/ },
    { engine: 'Redis', cause: 'unreachable host', adapterId: 'redis', config: { host: '127.0.0.1', port: 1, connectTimeoutSeconds: 2 }, databases: [], error: /cannot connect to 127\.0\.0\.1:1: .*ECONNREFUSED/ },
    { engine: 'Redis', cause: 'missing dump tool', adapterId: 'redis', config: { host: '127.0.0.1', mode: 'rdb', binDirectory: emptyBin }, databases: [], error: /redis-cli was not found/ },
    { engine: 'Redis', cause: 'unknown database', adapterId: 'redis', config: { host: '127.0.0.1' }, databases: ['999'], error: /database 999 does not exist on 127\.0\.0\.1:6379/ },
    // SQLite has no password of its own: its login is the SSH one of SSH mode.
    { engine: 'SQLite', cause: 'wrong password', adapterId: 'sqlite', config: { path: '/tmp/any.sqlite', ssh: ssh(), sshPassword: 'Wrong-Pw-1' }, databases: [], error: /SSH authentication failed: login to 127\.0\.0\.1:2222 as sshtest failed/ },
    { engine: 'SQLite', cause: 'unreachable host', adapterId: 'sqlite', config: { path: '/tmp/any.sqlite', ssh: { ...ssh(), port: 1 }, sshPassword: SSHD.password }, databases: [], error: /SSH connection failed: cannot connect to 127\.0\.0\.1:1/ },
    { engine: 'SQLite', cause: 'missing dump tool', adapterId: 'sqlite', config: { path: join(sqliteDir, 'live.sqlite'), binDirectory: emptyBin }, databases: [], error: /sqlite3 was not found/ },
    { engine: 'SQLite', cause: 'unknown database', adapterId: 'sqlite', config: { path: join(sqliteDir, 'missing.sqlite') }, databases: [], error: /database file .*missing\.sqlite does not exist/ },
  ];

  it('each of 16 failures (4 engines x 4 causes) ends Failed at dump start, names its cause, and writes nothing anywhere', async () => {
    const outcomes: string[] = [];
    for (const failure of cases()) {
      const label = `${failure.engine}, ${failure.cause}`;
      const done = await runJob(`${failure.engine} ${failure.cause}`.replaceAll(' ', '-'), failure.adapterId, failure.config, failure.databases);
      expect(done.status, `${label}: ${done.error}`).toBe('Failed');
      expect(done.error, label).toMatch(/the dump could not start/);
      expect(done.error, label).toMatch(failure.error);
      // Failed at the dump stage: the upload stage never began, no key was reserved, nothing has a size.
      expect(done.logs.map((entry: { stage: string }) => entry.stage), label).not.toContain('03-upload');
      expect(done.size, label).toBeNull();
      expect(await filesBelow(localDir), `${label}: local folder`).toEqual([]);
      expect(await filesBelow(sftpRoot), `${label}: sftp folder`).toEqual([]);
      outcomes.push(label);
    }
    expect(outcomes).toHaveLength(16);
  }, 300_000);

  it('control: a good source writes its backup and sidecar to both destinations', async () => {
    const done = await runJob('sqlite-good', 'sqlite', { path: join(sqliteDir, 'live.sqlite') }, []);
    expect(done.status, done.error).toBe('Success');
    expect(await filesBelow(localDir)).toEqual([done.path, `${done.path}.meta.json`]);
    expect(await filesBelow(sftpRoot)).toEqual([done.path, `${done.path}.meta.json`]);
  }, 60_000);
});
