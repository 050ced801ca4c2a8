// Issue 14 acceptance 3 for `system_error`: each background loop named by the issue (scheduler, storage statistics,
// queue) fails for a real reason on the assembled server (PostgreSQL), and the event reaches a generic-webhook channel
// with a notification log entry, once per window however often the loop retries; with the event disabled the same
// causes send nothing and log nothing. The system-task cause is in system-events.test.ts and observability.test.ts.
//
// How each loop is made to fail, without touching the code that raises the event:
// - scheduler: its `jobs` table is renamed away while it reloads every 500 ms;
// - storage statistics: another session holds an exclusive lock on `adapter_configs` longer than the database's
//   `lock_timeout`, so reading the destinations (the refresh "as a whole") fails; the lock is released the moment the
//   event is on the bus, because the channel itself is read from that table;
// - queue claim: a Pending execution waits while another session holds an EXCLUSIVE lock on `executions` (plain reads
//   pass, so the worker sees it; the claim's `SELECT ... FOR UPDATE` waits past `lock_timeout`);
// - scheduler, queueing a due slot: an every-minute job (scheduler time compressed 30x: a minute every 2 s) falls
//   due while `executions` is locked as for the claim, so inserting its run times out;
// - queue heartbeat: the `engine_processes` table is renamed away;
// - queue crash: a server process (`node dist/main.js`) is SIGKILLed while its backup is Running; the next process
//   that starts on the database closes the run and raises the event.
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOKENS, type HoldfastEvents } from '@holdfast/kernel';
import { startHttpReceiver, type HttpReceiver } from '@holdfast/testkit';
import { spawnNode, type SpawnedProcess } from '@holdfast/tooling/harness/spawned-process';
import { createThrowawayPostgres, type ThrowawayDatabase } from '@holdfast/tooling/harness/test-site';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type ServerHandle } from '../src/start-server.js';
import { ADMIN, startFullServer, type Caller, type FullServer } from './support/full-server.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** Short loop timings so each failure repeats several times within a test. */
const FAST_LOOPS = {
  HOLDFAST_ENGINE_POLL_MS: '500',
  HOLDFAST_ENGINE_HEARTBEAT_MS: '300',
  HOLDFAST_ENGINE_STALE_MS: '2000',
  HOLDFAST_ENGINE_SHUTDOWN_GRACE_MS: '2000',
  HOLDFAST_SCHEDULER_RELOAD_MS: '500',
  HOLDFAST_SCHEDULER_LEADER_RETRY_MS: '500',
};

/** The messages the loops log on each failed attempt (the event itself is raised once per window). */
const FAILURE_LOGS = {
  scheduler: 'scheduler: reloading jobs failed; keeping the current plan',
  storage: 'storage statistics refresh failed',
  claim: 'queue: claiming failed; retrying on the next poll',
  enqueue: 'scheduler: queueing scheduled runs failed',
  heartbeat: 'engine heartbeat failed',
};

interface Hook {
  eventType: string;
  title: string;
  message: string;
  success: boolean | null;
  fields: Array<{ name: string; value: string }>;
}

type SystemError = HoldfastEvents['system_error'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    // Not faster: some probes are GET requests, limited to 100 a minute by default.
    await sleep(250);
  }
}

/** A pino logger that keeps the `msg` of every warning and error, so a test can count a loop's failed attempts. */
function capturedLogger(): { logger: Logger; count(message: string): number } {
  const messages: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void messages.push((JSON.parse(line) as { msg: string }).msg) });
  return { logger, count: (message) => messages.filter((msg) => msg === message).length };
}

/** The system_error posts a receiver got, rendered as channels get them. */
function systemErrorHooks(receiver: HttpReceiver, source?: string): Hook[] {
  return receiver.requests
    .map((request) => JSON.parse(request.body.toString('utf8')) as Hook)
    .filter((hook) => hook.eventType === 'system_error')
    .filter((hook) => source === undefined || hook.fields.find((field) => field.name === 'Source')?.value === source);
}

const fieldsOf = (hook: Hook) => Object.fromEntries(hook.fields.map((field) => [field.name, field.value]));

/** A session on the test database that can rename tables or hold locks while the server runs. */
async function databaseSession(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', (error) => console.warn(`test session: connection lost: ${error.message}`));
  await client.connect();
  // The database's own lock_timeout (set below for the server) must not cut this session's waits short.
  await client.query('SET lock_timeout = 0');
  return client;
}

/** Every session the server opens on its database gives up on a lock after 1.5 s, as a production setting might. */
async function shortLockTimeout(url: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`ALTER DATABASE "${name}" SET lock_timeout = '1500ms'`);
  } finally {
    await client.end();
  }
}

/** One assembled server with a webhook channel for system events and its log captured. */
interface Site {
  server: FullServer;
  admin: Caller;
  receiver: HttpReceiver;
  hookId: string;
  diskId: string;
  disk: string;
  logs: ReturnType<typeof capturedLogger>;
  raised: SystemError[];
  db: pg.Client;
  call(method: string, path: string, body?: unknown, status?: number): Promise<any>;
  configure(enabled: boolean): Promise<void>;
  logEntries(): Promise<any[]>;
  close(): Promise<void>;
}

async function startSite(env: Record<string, string> = {}): Promise<Site> {
  const receiver = await startHttpReceiver();
  const logs = capturedLogger();
  const server = await startFullServer('postgresql', { env: { ...FAST_LOOPS, ...env }, logger: logs.logger, prepareDatabase: shortLockTimeout });
  const admin = await server.signIn(ADMIN.email, ADMIN.password);
  const call = async (method: string, path: string, body?: unknown, status = 200) => {
    const answer = await server.call(method, path, admin, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(status);
    return answer.body;
  };
  // Every system_error on this server's bus, sent or not: proves a cause happened while the event is disabled.
  const raised: SystemError[] = [];
  server.handle.container.resolve(TOKENS.EventBus).on('system_error', (payload) => void raised.push(payload));
  const hookId = (await call('POST', '/api/adapters', { name: 'ops hook', type: 'notification', adapterId: 'generic-webhook', config: { webhookUrl: `${receiver.url}/hook` } }, 201)).id as string;
  const disk = await mkdtemp(join(tmpdir(), 'holdfast-syserr-disk-'));
  const diskId = (await call('POST', '/api/adapters', { name: 'local disk', type: 'storage', adapterId: 'local', config: { path: disk } }, 201)).id as string;
  const db = await databaseSession(server.databaseUrl!);
  return {
    server,
    admin,
    receiver,
    hookId,
    diskId,
    disk,
    logs,
    raised,
    db,
    call,
    async configure(enabled) {
      await call('PUT', '/api/settings', { 'notifications.config': { globalChannels: [hookId], events: { system_error: { enabled, channels: null, notifyUser: 'none' } } } });
    },
    async logEntries() {
      return (await call('GET', '/api/notifications/log?eventType=system_error&pageSize=50')).entries as any[];
    },
    async close() {
      await db.end().catch(() => undefined);
      await server.close();
      await receiver.close();
      await rm(disk, { recursive: true, force: true });
    },
  };
}

/** Holds `lock` on `table` in a transaction of `db` until the returned function is called (safe to call twice). */
async function holdLock(db: pg.Client, table: string, mode: string): Promise<() => Promise<void>> {
  await db.query('BEGIN');
  await db.query(`LOCK TABLE ${table} IN ${mode} MODE`);
  let released: Promise<unknown> | undefined;
  return () => (released ??= db.query('COMMIT')).then(() => undefined);
}

/**
 * A Pending execution the engine sees but cannot claim. Workers only open a claim transaction when something waits,
 * so the queue needs a row: a second session inserts it in an open transaction, `db` then asks for the EXCLUSIVE lock
 * on `executions` (it queues behind the insert), and the insert commits. The lock is granted the moment the row becomes
 * visible, before any claim's `FOR UPDATE` (queued behind it) can take the row. The returned function deletes the row
 * in the locking transaction and commits, so nothing is left to run.
 */
async function pendingRowBehindLock(site: Site): Promise<() => Promise<void>> {
  const inserter = await databaseSession(site.server.databaseUrl!);
  const id = randomUUID();
  try {
    await inserter.query('BEGIN');
    await inserter.query(
      `INSERT INTO executions (id, job_id, type, status, started_at, created_at, queue_order, metadata) VALUES ($1, NULL, 'Backup', 'Pending', now(), now(), 0, '{}')`,
      [id],
    );
    await site.db.query('BEGIN');
    const locked = site.db.query('LOCK TABLE executions IN EXCLUSIVE MODE');
    // The lock request is waiting on the insert's transaction before that transaction commits.
    await until('the lock request to queue', async () => ((await inserter.query(`SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'executions'::regclass AND mode = 'ExclusiveLock' AND NOT granted`)).rows[0].n > 0 ? true : undefined));
    await inserter.query('COMMIT');
    await locked;
  } finally {
    await inserter.end();
  }
  let released: Promise<unknown> | undefined;
  return () => (released ??= site.db.query('DELETE FROM executions WHERE id = $1', [id]).then(() => site.db.query('COMMIT'))).then(() => undefined);
}

/**
 * Makes the storage statistics fail as a whole once: `adapter_configs` locked past lock_timeout while a refresh runs
 * (the REFRESH_STORAGE_STATS system task asks for one). Released as soon as the event is on the bus (the channel is
 * read from that table), or once the failure is logged when the event is not raised again within its window.
 */
async function failStorageStatistics(site: Site): Promise<void> {
  const before = site.logs.count(FAILURE_LOGS.storage);
  const release = await holdLock(site.db, 'adapter_configs', 'ACCESS EXCLUSIVE');
  const off = site.server.handle.container.resolve(TOKENS.EventBus).on('system_error', (payload) => {
    if (payload.source === 'storage-statistics') void release();
  });
  try {
    await site.call('POST', '/api/settings/system-tasks/REFRESH_STORAGE_STATS/run', undefined, 202);
    await until('a failed storage statistics refresh', () => (site.logs.count(FAILURE_LOGS.storage) > before ? true : undefined));
  } finally {
    off();
    await release();
  }
}

/** Renames the scheduler's `jobs` table away until it has failed `attempts` reloads, then back. */
async function failSchedulerReloads(site: Site, attempts: number): Promise<void> {
  const before = site.logs.count(FAILURE_LOGS.scheduler);
  await site.db.query('ALTER TABLE jobs RENAME TO jobs_moved_away');
  try {
    await until(`${attempts} failed scheduler reloads`, () => (site.logs.count(FAILURE_LOGS.scheduler) - before >= attempts ? true : undefined));
  } finally {
    await site.db.query('ALTER TABLE jobs_moved_away RENAME TO jobs');
  }
}

describe('system_error from its real causes on the assembled server (postgresql)', () => {
  let site: Site;

  beforeAll(async () => {
    site = await startSite();
    await site.configure(true);
  }, 120_000);

  afterAll(async () => {
    await site?.close();
  });

  it('scheduler: reloading jobs fails on every reload while its table is gone; one event reaches the channel, with a log entry', async () => {
    await failSchedulerReloads(site, 4);
    await until('the scheduler hook', () => (systemErrorHooks(site.receiver, 'scheduler').length > 0 ? true : undefined));
    await sleep(1_000);
    const hooks = systemErrorHooks(site.receiver, 'scheduler');
    expect(hooks).toHaveLength(1);
    expect(hooks[0]).toMatchObject({ title: 'System error', message: 'The scheduler could not reload jobs', success: false });
    expect(fieldsOf(hooks[0]!).Error).toMatch(/jobs/);
    const entries = (await site.logEntries()).filter((entry) => entry.message === 'The scheduler could not reload jobs');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ eventType: 'system_error', channelId: site.hookId, channelName: 'ops hook', status: 'Success' });
    // The plan survived: once the table is back, reloads succeed again and raise nothing more.
    const failed = site.logs.count(FAILURE_LOGS.scheduler);
    await sleep(1_500);
    expect(site.logs.count(FAILURE_LOGS.scheduler)).toBe(failed);
  }, 60_000);

  it('storage statistics: a refresh whose destination list cannot be read raises one event that reaches the channel, with a log entry', async () => {
    await failStorageStatistics(site);
    const hook = await until('the storage statistics hook', () => systemErrorHooks(site.receiver, 'storage-statistics')[0]);
    expect(hook).toMatchObject({ title: 'System error', message: 'Refreshing the storage statistics failed', success: false });
    expect(fieldsOf(hook).Error).toMatch(/lock timeout/);
    expect(site.logs.count(FAILURE_LOGS.storage)).toBeGreaterThanOrEqual(1);
    const entries = await until('the storage statistics log entry', async () => {
      const found = (await site.logEntries()).filter((entry) => entry.message === 'Refreshing the storage statistics failed');
      return found.length > 0 ? found : undefined;
    });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ eventType: 'system_error', channelId: site.hookId, status: 'Success' });
    // A second failure within the window is logged but not raised or sent again.
    await failStorageStatistics(site);
    expect(site.logs.count(FAILURE_LOGS.storage)).toBeGreaterThanOrEqual(2);
    await sleep(1_000);
    expect(site.raised.filter((event) => event.source === 'storage-statistics')).toHaveLength(1);
    expect(systemErrorHooks(site.receiver, 'storage-statistics')).toHaveLength(1);
  }, 60_000);

  it('queue: claiming fails on every poll while executions are locked; one event reaches the channel, with a log entry', async () => {
    const release = await pendingRowBehindLock(site);
    try {
      await until('three failed claims', () => (site.logs.count(FAILURE_LOGS.claim) >= 3 ? true : undefined), 40_000);
    } finally {
      await release();
    }
    await until('the queue hook', () => (systemErrorHooks(site.receiver, 'queue').length > 0 ? true : undefined));
    await sleep(1_000);
    const hooks = systemErrorHooks(site.receiver, 'queue');
    expect(hooks).toHaveLength(1);
    expect(hooks[0]).toMatchObject({ title: 'System error', message: 'The run queue could not claim executions', success: false });
    expect(fieldsOf(hooks[0]!).Error).toMatch(/lock timeout/);
    const entries = (await site.logEntries()).filter((entry) => entry.message === 'The run queue could not claim executions');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ eventType: 'system_error', channelId: site.hookId, status: 'Success' });
    // Each failed claim was a real attempt (the heartbeat kept working: no other queue failure was raised).
    expect(site.raised.filter((event) => event.source === 'queue')).toEqual([{ message: 'The run queue could not claim executions', source: 'queue', error: expect.stringMatching(/lock timeout/) }]);
  }, 60_000);
});

describe('system_error disabled, then the engine heartbeat (postgresql)', () => {
  let site: Site;

  beforeAll(async () => {
    site = await startSite();
    await site.configure(false);
  }, 120_000);

  afterAll(async () => {
    await site?.close();
  });

  it('with system_error disabled, a failing scheduler and storage statistics send nothing and log nothing', async () => {
    await failSchedulerReloads(site, 3);
    await failStorageStatistics(site);
    // Both causes happened and raised the event on the bus ...
    await until('both events on the bus', () => (['scheduler', 'storage-statistics'].every((source) => site.raised.some((event) => event.source === source)) ? true : undefined));
    expect(site.raised.map((event) => event.message).sort()).toEqual(['Refreshing the storage statistics failed', 'The scheduler could not reload jobs']);
    // ... and nothing went out: give a late send time to show up.
    await sleep(2_000);
    expect(systemErrorHooks(site.receiver)).toEqual([]);
    expect(await site.logEntries()).toEqual([]);
  }, 60_000);

  it('queue: the heartbeat fails on every beat while engine_processes is gone; one event reaches the channel, with a log entry', async () => {
    await site.configure(true);
    const before = site.logs.count(FAILURE_LOGS.heartbeat);
    await site.db.query('ALTER TABLE engine_processes RENAME TO engine_processes_moved_away');
    try {
      await until('three failed heartbeats', () => (site.logs.count(FAILURE_LOGS.heartbeat) - before >= 3 ? true : undefined));
    } finally {
      await site.db.query('ALTER TABLE engine_processes_moved_away RENAME TO engine_processes');
    }
    await until('the heartbeat hook', () => (systemErrorHooks(site.receiver, 'queue').length > 0 ? true : undefined));
    await sleep(1_000);
    const hooks = systemErrorHooks(site.receiver, 'queue');
    expect(hooks).toHaveLength(1);
    expect(hooks[0]).toMatchObject({ title: 'System error', message: 'The engine heartbeat failed', success: false });
    expect(fieldsOf(hooks[0]!).Error).toMatch(/engine_processes/);
    const entries = await site.logEntries();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ eventType: 'system_error', message: 'The engine heartbeat failed', channelId: site.hookId, status: 'Success' });
  }, 60_000);
});

describe('system_error when the scheduler cannot queue a due slot (postgresql)', () => {
  let site: Site;

  beforeAll(async () => {
    // Scheduler time runs 30 times faster (test only): an every-minute job falls due every 2 s.
    site = await startSite({ HOLDFAST_SCHEDULER_TIME_SCALE: '30', HOLDFAST_SCHEDULER_TIME_ORIGIN: new Date().toISOString() });
    await site.configure(true);
  }, 120_000);

  afterAll(async () => {
    await site?.close();
  });

  it('a due slot whose run cannot be inserted raises one event from the scheduler that reaches the channel, with a log entry', async () => {
    const folder = join(site.disk, 'source');
    await mkdir(folder);
    await writeFile(join(folder, 'notes.txt'), 'scheduled\n');
    const sourceId = (await site.call('POST', '/api/adapters', { name: 'files', type: 'database', adapterId: 'directory', config: { paths: [folder] } }, 201)).id as string;
    const release = await holdLock(site.db, 'executions', 'EXCLUSIVE');
    let jobId: string;
    try {
      // Created with the table locked, so its first slot already meets the lock.
      jobId = (await site.call('POST', '/api/jobs', { name: 'every minute', schedule: '* * * * *', sourceId, compression: 'GZIP', destinations: [{ configId: site.diskId }] }, 201)).id as string;
      await until('two slots that could not be queued', () => (site.logs.count(FAILURE_LOGS.enqueue) >= 2 ? true : undefined), 40_000);
    } finally {
      await release();
    }
    await until('the scheduler hook', () => (systemErrorHooks(site.receiver, 'scheduler').length > 0 ? true : undefined));
    await sleep(1_000);
    const hooks = systemErrorHooks(site.receiver, 'scheduler');
    expect(hooks).toHaveLength(1);
    expect(hooks[0]).toMatchObject({ title: 'System error', message: `The scheduler could not queue a run of job ${jobId}`, success: false });
    expect(fieldsOf(hooks[0]!).Error).toMatch(/lock timeout/);
    const entries = (await site.logEntries()).filter((entry) => entry.message === hooks[0]!.message);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ eventType: 'system_error', channelId: site.hookId, status: 'Success' });
    // With the lock gone, the next slot is queued and runs: the plan survived the failures.
    const run = await until(
      'a scheduled run',
      async () => ((await site.call('GET', '/api/history?trigger=Scheduler&pageSize=10')).executions as Array<{ jobId: string; status: string }>).find((execution) => execution.jobId === jobId && execution.status === 'Success'),
      40_000,
    );
    expect(run).toMatchObject({ jobId, status: 'Success' });
  }, 90_000);
});

describe('system_error when a server process dies mid-run (postgresql, two processes)', () => {
  let postgres: ThrowawayDatabase;
  let db: pg.Pool;
  let receiver: HttpReceiver;
  let killed: SpawnedProcess | undefined;
  let next: ServerHandle | undefined;
  const dirs: string[] = [];

  beforeAll(() => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: build first (npx turbo run build --filter=@holdfast/server...)`);
  });

  afterAll(async () => {
    if (killed && killed.child.exitCode === null && killed.child.signalCode === null) killed.child.kill('SIGKILL');
    await killed?.exited;
    await next?.close();
    await receiver?.close();
    await db?.end();
    await postgres?.drop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('the next process closes the run of a SIGKILLed process as Failed and raises one event that reaches the channel, with a log entry', async () => {
    postgres = await createThrowawayPostgres();
    db = new pg.Pool({ connectionString: postgres.url, max: 2 });
    // An idle pooled connection that PostgreSQL closes is reported here, not as an uncaught error; queries still fail.
    db.on('error', (error) => console.warn(`test pool: idle connection lost: ${error.message}`));
    receiver = await startHttpReceiver();
    const work = await mkdtemp(join(tmpdir(), 'holdfast-syserr-crash-'));
    dirs.push(work);
    const [sourceDir, destDir, firstData, nextData] = ['source', 'backups', 'data-first', 'data-next'].map((name) => join(work, name));
    for (const dir of [sourceDir, destDir, firstData, nextData]) await mkdir(dir!);
    // Big enough (incompressible) that the backup is still Running when the process is killed.
    await writeFile(join(sourceDir!, 'data.bin'), randomBytes(48 * 1024 * 1024));
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      DATABASE_URL: postgres.url,
      // Processes of one installation share the system key.
      HOLDFAST_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      HOLDFAST_LOCAL_ROOTS: work,
      LOG_LEVEL: 'info',
      ...FAST_LOOPS,
    };

    killed = spawnNode(MAIN, [], { ...env, HOLDFAST_DATA_DIR: firstData });
    const listening = (await killed.waitForLog('holdfast listening', 60_000)) as unknown as { port: number };
    const engineId = ((await killed.waitForLog('engine started', 10_000)) as unknown as { processId: string }).processId;
    const url = `http://127.0.0.1:${listening.port}`;
    const request = async (base: string, method: string, path: string, caller?: Caller, body?: unknown, status = 200) => {
      const headers: Record<string, string> = {};
      if (caller?.cookie) Object.assign(headers, { cookie: caller.cookie, 'x-csrf-token': caller.csrf });
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await response.text();
      expect(response.status, `${method} ${path}: ${text}`).toBe(status);
      return text ? JSON.parse(text) : undefined;
    };
    await request(url, 'POST', '/api/auth/setup', undefined, { name: 'Admin', ...ADMIN }, 201);
    const signIn = await fetch(`${url}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: ADMIN.email, password: ADMIN.password }) });
    const admin: Caller = { cookie: (signIn.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: ((await signIn.json()) as { csrfToken: string }).csrfToken };
    const hookId = (await request(url, 'POST', '/api/adapters', admin, { name: 'ops hook', type: 'notification', adapterId: 'generic-webhook', config: { webhookUrl: `${receiver.url}/hook` } }, 201)).id as string;
    await request(url, 'PUT', '/api/settings', admin, { 'notifications.config': { globalChannels: [hookId], events: { system_error: { enabled: true, channels: null, notifyUser: 'none' } } } });
    const source = (await request(url, 'POST', '/api/adapters', admin, { name: 'files', type: 'database', adapterId: 'directory', config: { paths: [sourceDir] } }, 201)).id as string;
    const disk = (await request(url, 'POST', '/api/adapters', admin, { name: 'disk', type: 'storage', adapterId: 'local', config: { path: destDir } }, 201)).id as string;
    const job = (await request(url, 'POST', '/api/jobs', admin, { name: 'files', schedule: '0 3 1 1 *', sourceId: source, compression: 'GZIP', destinations: [{ configId: disk, priority: 0 }] }, 201)).id as string;
    const executionId = (await request(url, 'POST', `/api/jobs/${job}/run`, admin)).executionId as string;

    // Killed while its backup runs: the row stays Running with a heartbeat that stops moving.
    // Polled straight from the database, every 20 ms: the run lasts a second or two.
    for (const deadline = Date.now() + 60_000; ; await sleep(20)) {
      const [row] = (await db.query('SELECT status, claimed_by FROM executions WHERE id = $1', [executionId])).rows as Array<{ status: string; claimed_by: string }>;
      if (row && row.status !== 'Pending' && row.status !== 'Running') throw new Error(`the backup ended ${row.status} before the kill: make it bigger`);
      if (row?.status === 'Running' && row.claimed_by === engineId) break;
      if (Date.now() > deadline) throw new Error(`the backup never ran on the first process: ${JSON.stringify(row)}`);
    }
    killed.child.kill('SIGKILL');
    expect(await killed.exited).toMatchObject({ signal: 'SIGKILL' });
    expect((await db.query('SELECT status FROM executions WHERE id = $1', [executionId])).rows[0].status).toBe('Running');
    expect(systemErrorHooks(receiver)).toEqual([]);

    // Past the stale time the next process to start takes the run for an orphan (at its start or on a heartbeat).
    await sleep(2_500);
    next = await startServer({ env: { ...env, HOLDFAST_DATA_DIR: nextData! }, logger: pino({ level: 'silent' }), host: '127.0.0.1' });
    const hook = await until('the crash hook', () => systemErrorHooks(receiver)[0], 30_000);
    const interrupted = `interrupted: the server process ${engineId} stopped (no heartbeat for more than 2 s); another server process closed this run`;
    expect(hook).toMatchObject({ title: 'System error', message: `Execution ${executionId} crashed`, success: false });
    expect(fieldsOf(hook)).toEqual({ Source: 'queue', Error: interrupted });
    const [row] = (await db.query('SELECT status, error FROM executions WHERE id = $1', [executionId])).rows as Array<{ status: string; error: string }>;
    expect(row).toEqual({ status: 'Failed', error: interrupted });
    const logEntries = async () => (await request(next!.url, 'GET', '/api/notifications/log?eventType=system_error', admin)).entries as any[];
    await until('the crash log entry', async () => ((await logEntries()).length > 0 ? true : undefined));
    // Once: later heartbeats of the next process find nothing more to close.
    await sleep(1_500);
    expect(systemErrorHooks(receiver)).toHaveLength(1);
    const entries = await logEntries();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ eventType: 'system_error', message: `Execution ${executionId} crashed`, channelId: hookId, status: 'Success' });
  }, 120_000);
});
