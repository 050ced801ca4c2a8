// Issue 44 acceptance 5, and PostgreSQL alike, on the assembled server with the real adapters and real servers: a
// point-in-time job is refused at save (422 naming what is missing, nothing stored) when its source's server cannot
// serve it, and saved when it can. MySQL/MariaDB: the machine MariaDB on 3306 (binary logging off), the PITR MariaDB
// on 3307 with its accounts without REPLICATION SLAVE / without any replication privilege / with both. PostgreSQL: the
// PITR cluster on 5433 with a role without REPLICATION and the replication role. A server that cannot be reached is
// refused as "could not be checked"; a source its job uses, switched into physical mode, is checked the same way. A
// MySQL point-in-time job takes a test restore into a throwaway database only (a directory target is refused).
// Saved jobs stay disabled, so no stream starts on the shared servers.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

const run = promisify(execFile);
const SERVICES = '/tmp/holdfast-test-services';
type Account = { user: string; password: string };
const maria = JSON.parse(readFileSync(`${SERVICES}/mariadb/mariadb.json`, 'utf8')) as { host: string; port: number; user: string };
const mariaPitr = JSON.parse(readFileSync(`${SERVICES}/mariadb-pitr/mariadb-pitr.json`, 'utf8')) as { host: string; port: number; users: Record<'binlog' | 'noSlave' | 'noRepl', Account> };
const pgPitr = JSON.parse(readFileSync(`${SERVICES}/postgres-pitr/postgres-pitr.json`, 'utf8')) as { host: string; port: number; roles: Record<'repl' | 'norepl', Account> };

/** A TCP port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const listener = createServer();
  const port = await new Promise<number>((resolve) => listener.listen(0, '127.0.0.1', () => resolve((listener.address() as { port: number }).port)));
  await new Promise((resolve) => listener.close(resolve));
  return port;
}

describe('saving a point-in-time job checks its source against the real servers', () => {
  let server: FullServer;
  let admin: Caller;
  let destDir: string;
  let destinationId: string;
  const suffix = Date.now().toString(36);

  const call = async (method: string, path: string, body?: unknown, status = 200) => {
    const answer = await server.call(method, path, admin, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(status);
    return answer.body as Record<string, unknown> & { id: string };
  };
  const source = async (name: string, adapterId: 'mysql' | 'postgres', config: Record<string, unknown>) =>
    (await call('POST', '/api/adapters', { name: `${name} ${suffix}`, type: 'database', adapterId, config }, 201)).id;
  const saveJob = (name: string, sourceId: string) =>
    server.call('POST', '/api/jobs', admin, { name: `${name} ${suffix}`, schedule: '0 3 * * *', enabled: false, sourceId, databases: [], destinations: [{ configId: destinationId }] });
  const jobNames = async () => ((await call('GET', '/api/jobs')) as unknown as Array<{ name: string }>).map((job) => job.name).sort();

  /** The save is refused with 422 naming `expected` (and the source), and the job list is the same before and after. */
  async function expectRefused(name: string, sourceId: string, expected: string[]): Promise<string> {
    const before = await jobNames();
    const answer = await saveJob(name, sourceId);
    expect(answer.status, JSON.stringify(answer.body)).toBe(422);
    const message = String(answer.body.error);
    for (const text of expected) expect(message).toContain(text);
    expect(await jobNames()).toEqual(before);
    return message;
  }

  beforeAll(async () => {
    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    destDir = await mkdtemp(join(tmpdir(), 'holdfast-pitr-readiness-'));
    destinationId = (await call('POST', '/api/adapters', { name: 'local', type: 'storage', adapterId: 'local', config: { path: destDir } }, 201)).id;
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    if (destDir) await rm(destDir, { recursive: true, force: true });
  });

  it('MySQL: binary logging off on the machine MariaDB (3306) is refused naming log_bin', async () => {
    const { stdout } = await run('mariadb', ['-h', maria.host, '-P', String(maria.port), '-u', maria.user, '-N', '-B', '-e', 'SELECT @@log_bin']);
    expect(stdout.trim()).toBe('0');
    const id = await source('mysql no binlog', 'mysql', { mode: 'point-in-time', host: maria.host, port: maria.port, user: maria.user, tls: 'disable' });
    await expectRefused('mysql no binlog', id, [`source "mysql no binlog ${suffix}" cannot serve point-in-time recovery:`, `binary logging is off on ${maria.host}:${maria.port} (log_bin)`]);
  }, 60_000);

  it('MySQL: the PITR MariaDB refuses accounts without the replication privileges, naming each, and saves with them', async () => {
    const pitrSource = (account: keyof typeof mariaPitr.users) =>
      source(`mysql ${account}`, 'mysql', { mode: 'point-in-time', host: mariaPitr.host, port: mariaPitr.port, ...mariaPitr.users[account], tls: 'disable' });
    const noSlave = await expectRefused('mysql noSlave', await pitrSource('noSlave'), [`account 'holdfast_noslave'@'%' lacks the REPLICATION SLAVE privilege`]);
    expect(noSlave).not.toContain('REPLICATION CLIENT privilege');
    expect(noSlave).not.toContain('log_bin');
    expect(noSlave).not.toContain(mariaPitr.users.noSlave.password);
    await expectRefused('mysql noRepl', await pitrSource('noRepl'), [
      `account 'holdfast_norepl'@'%' lacks the REPLICATION SLAVE privilege`,
      `account 'holdfast_norepl'@'%' lacks the REPLICATION CLIENT privilege`,
    ]);
    const sourceId = await pitrSource('binlog');
    const saved = await saveJob('mysql binlog', sourceId);
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect(saved.body).toMatchObject({ name: `mysql binlog ${suffix}`, sourceId, enabled: false });
    expect(await jobNames()).toContain(`mysql binlog ${suffix}`);

    // Such a job's test restore rebuilds its databases in throwaway databases on a server: a directory target is
    // refused, at create and when a PUT adds one, the stored job unchanged; a database target is saved.
    const before = await jobNames();
    const withDirectory = await server.call('POST', '/api/jobs', admin, {
      name: `mysql test restore ${suffix}`, schedule: '0 3 * * *', enabled: false, sourceId, databases: [], destinations: [{ configId: destinationId }],
      testRestore: { target: { type: 'directory', path: destDir } },
    });
    expect(withDirectory.status, JSON.stringify(withDirectory.body)).toBe(422);
    expect(String(withDirectory.body.error)).toContain(`source "mysql binlog ${suffix}" is a MySQL/MariaDB point-in-time source: its test restore rebuilds each database of the base backup in a throwaway database`);
    expect(String(withDirectory.body.error)).toContain('not directory');
    expect(await jobNames()).toEqual(before);
    const stored = await call('GET', `/api/jobs/${saved.body.id as string}`);
    const added = await server.call('PUT', `/api/jobs/${saved.body.id as string}`, admin, { testRestore: { target: { type: 'directory', path: destDir } } });
    expect(added.status, JSON.stringify(added.body)).toBe(422);
    expect(String(added.body.error)).toContain('testRestore.target must be { "type": "database" }');
    expect(await call('GET', `/api/jobs/${saved.body.id as string}`)).toEqual(stored);
    const withDatabase = await server.call('POST', '/api/jobs', admin, {
      name: `mysql test restore ${suffix}`, schedule: '0 3 * * *', enabled: false, sourceId, databases: [], destinations: [{ configId: destinationId }],
      testRestore: { target: { type: 'database' }, schedule: '0 4 * * 0' },
    });
    expect(withDatabase.status, JSON.stringify(withDatabase.body)).toBe(201);
    expect(withDatabase.body.testRestore).toMatchObject({ target: { type: 'database' } });
    // The scratch server must be of the job source's engine: the base is loaded and the log replayed by its tools.
    const pgScratch = await source('pg scratch', 'postgres', { host: pgPitr.host, port: pgPitr.port, ...pgPitr.roles.repl, sslMode: 'disable' });
    const otherEngine = await server.call('PUT', `/api/jobs/${saved.body.id as string}`, admin, { testRestore: { target: { type: 'database', sourceId: pgScratch } } });
    expect(otherEngine.status, JSON.stringify(otherEngine.body)).toBe(422);
    expect(String(otherEngine.body.error)).toContain(`testRestore.target.sourceId must name a mysql source ("pg scratch ${suffix}" is postgres)`);
    expect(await call('GET', `/api/jobs/${saved.body.id as string}`)).toEqual(stored);
    const addedDatabase = await server.call('PUT', `/api/jobs/${saved.body.id as string}`, admin, { testRestore: { target: { type: 'database', sourceId } } });
    expect(addedDatabase.status, JSON.stringify(addedDatabase.body)).toBe(200);
  }, 60_000);

  it('PostgreSQL: a physical-mode role without REPLICATION is refused; the replication role saves', async () => {
    const physical = (role: keyof typeof pgPitr.roles) =>
      source(`pg ${role}`, 'postgres', { mode: 'physical', host: pgPitr.host, port: pgPitr.port, ...pgPitr.roles[role], sslMode: 'disable' });
    const message = await expectRefused('pg norepl', await physical('norepl'), [`source "pg norepl ${suffix}" cannot serve point-in-time recovery:`, 'role "holdfast_norepl" lacks the REPLICATION privilege']);
    expect(message).not.toContain(pgPitr.roles.norepl.password);
    const sourceId = await physical('repl');
    const saved = await saveJob('pg repl', sourceId);
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect(await jobNames()).toContain(`pg repl ${suffix}`);
  }, 60_000);

  it('a server that cannot be reached is refused: it could not be checked', async () => {
    const port = await closedPort();
    const id = await source('unreachable', 'mysql', { mode: 'point-in-time', host: '127.0.0.1', port, user: 'nobody', tls: 'disable', connectTimeoutSeconds: 3 });
    await expectRefused('unreachable', id, [`source "unreachable ${suffix}" could not be checked for point-in-time recovery, so nothing was saved:`, `127.0.0.1:${port}`]);
  }, 60_000);

  it('a source its job uses, switched into physical mode, is checked: refused without REPLICATION, saved with it', async () => {
    const logical = { host: pgPitr.host, port: pgPitr.port, ...pgPitr.roles.norepl, sslMode: 'disable' };
    const sourceId = await source('pg switched', 'postgres', logical);
    const saved = await saveJob('pg switched', sourceId);
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const stored = await call('GET', `/api/adapters/${sourceId}`);
    const refused = await server.call('PUT', `/api/adapters/${sourceId}`, admin, { config: { ...logical, mode: 'physical' } });
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(String(refused.body.error)).toContain('role "holdfast_norepl" lacks the REPLICATION privilege');
    expect(await call('GET', `/api/adapters/${sourceId}`)).toEqual(stored);
    const switched = await call('PUT', `/api/adapters/${sourceId}`, { config: { ...logical, ...pgPitr.roles.repl, mode: 'physical' } });
    expect(switched.config).toMatchObject({ mode: 'physical', user: pgPitr.roles.repl.user });
  }, 60_000);
});
