// Issue 40 acceptance 3: a data directory made by the release before the house change (commit bd36ffe) opens with
// this server and keeps what that change moved: the adapter health state (then four columns of the catalog's
// `adapter_configs`, now observability's `adapter_health`) and the system task schedules (then the catalog's
// `system_tasks`, now observability's `system_task_schedules`), next to the job, its history, a credential sealed with
// the data directory's system key and an API key; on the embedded database (the data directory's holdfast.db) and on
// PostgreSQL (a pg_dump of the old release's database, restored into a throwaway one). The fixtures and what the old
// server answered about them come from fixtures/data-dir-bd36ffe/generate.mjs (its header says how to regenerate them).
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createGunzip } from 'node:zlib';
import { TOKENS } from '@holdfast/kernel';
import { createThrowawayPostgres, type TestDialect, type ThrowawayDatabase } from '@holdfast/tooling/harness/test-site';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type ServerHandle } from '../src/start-server.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/data-dir-bd36ffe/', import.meta.url));

/** The migrations of the house change that carry the old data over. */
const HANDOVER_MIGRATIONS = ['20261205-observability-002-adapter-health', '20261205-observability-003-system-task-schedules'];

interface AdapterState {
  id: string;
  name: string;
  lastHealthCheck: string | null;
  lastStatus: string;
  lastError: string | null;
  consecutiveFailures: number;
}

interface Expected {
  admin: { email: string; password: string };
  adapters: AdapterState[];
  job: { id: string; name: string; sourceId: string; schedule: string; enabled: boolean };
  execution: { id: string; status: string };
  history: { executions: Array<Record<string, unknown>> };
  systemTasks: Array<{ task: string; enabled: boolean; schedule: string; lastRunAt: string | null }>;
  credential: { id: string; name: string; type: string; username: string; password: string };
  apiKey: { id: string; name: string; key: string };
}

/** Restores the old release's plain pg_dump into `url` through psql (stops at the first error). */
async function restoreDump(url: string): Promise<void> {
  const psql = spawn('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  psql.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => psql.once('exit', resolve));
  await pipeline(createReadStream(join(FIXTURE, 'holdfast-postgresql.sql.gz')), createGunzip(), psql.stdin);
  const code = await exited;
  if (code !== 0) throw new Error(`psql restore of the bd36ffe dump failed (${String(code)}): ${stderr}`);
}

describe.each(['sqlite', 'postgresql'] as const)('an installation made by the release before the house change (bd36ffe) on %s', (dialect: TestDialect) => {
  let expected: Expected;
  let work: string;
  let postgres: ThrowawayDatabase | undefined;
  let server: ServerHandle;
  const logs: Array<{ msg?: string; migration?: string }> = [];
  let session: { cookie: string; csrf: string };

  const call = async (method: string, path: string, auth: { bearer?: string } = {}): Promise<{ status: number; body: any }> => {
    const headers: Record<string, string> = auth.bearer ? { authorization: `Bearer ${auth.bearer}` } : { cookie: session.cookie, 'x-csrf-token': session.csrf };
    const response = await fetch(`${server.url}${path}`, { method, headers });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const read = async (path: string): Promise<any> => {
    const answer = await call('GET', path);
    expect(answer.status, `GET ${path}: ${JSON.stringify(answer.body)}`).toBe(200);
    return answer.body;
  };

  beforeAll(async () => {
    expected = JSON.parse(await readFile(join(FIXTURE, `expected.${dialect}.json`), 'utf8')) as Expected;
    work = await mkdtemp(join(tmpdir(), 'holdfast-upgrade-'));
    const dataDir = join(work, 'data');
    await mkdir(dataDir, { mode: 0o700 });
    if (dialect === 'postgresql') {
      postgres = await createThrowawayPostgres();
      await restoreDump(postgres.url);
    } else {
      await pipeline(createReadStream(join(FIXTURE, 'holdfast.db.gz')), createGunzip(), createWriteStream(join(dataDir, 'holdfast.db')));
    }
    await copyFile(join(FIXTURE, 'system.key'), join(dataDir, 'system.key'));
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logs.push(JSON.parse(line));
        done();
      },
    });
    server = await startServer({
      env: { PORT: '0', HOLDFAST_DATA_DIR: dataDir, DATABASE_URL: postgres?.url ?? '', HOLDFAST_LOCAL_ROOTS: work },
      logger: pino({ level: 'info' }, sink),
      host: '127.0.0.1',
    });
    const signIn = await fetch(`${server.url}/api/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(expected.admin),
    });
    expect(signIn.status, await signIn.clone().text()).toBe(200);
    session = { cookie: (signIn.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: ((await signIn.json()) as { csrfToken: string }).csrfToken };
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await postgres?.drop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('applies the handover migrations on the first start and leaves none pending', async () => {
    const applied = logs.filter((entry) => entry.msg === 'migration applied').map((entry) => entry.migration);
    expect(applied).toEqual(expect.arrayContaining(HANDOVER_MIGRATIONS));
    // The old release's own migrations ran when it made the directory; they do not run again.
    expect(applied).not.toContain('20260102-catalog-001-schema');
    expect(applied).not.toContain('20261124-observability-001-tables');
    const database = server.container.resolve(TOKENS.Database) as unknown as { pendingMigrations(): Promise<string[]> };
    expect(await database.pendingMigrations()).toEqual([]);
  });

  it('keeps every adapter and the health state the old server had recorded', async () => {
    expect(expected.adapters.some((adapter) => adapter.lastStatus !== 'ONLINE' && adapter.consecutiveFailures > 0 && adapter.lastError)).toBe(true);
    for (const adapter of expected.adapters) {
      const view = await read(`/api/adapters/${adapter.id}`);
      expect({
        id: view.id,
        name: view.name,
        lastHealthCheck: view.lastHealthCheck,
        lastStatus: view.lastStatus,
        lastError: view.lastError,
        consecutiveFailures: view.consecutiveFailures,
      }).toEqual(adapter);
    }
  });

  it('keeps the job and its history', async () => {
    const job = await read(`/api/jobs/${expected.job.id}`);
    expect(job).toMatchObject({ name: expected.job.name, sourceId: expected.job.sourceId, schedule: expected.job.schedule, enabled: expected.job.enabled });
    const execution = await read(`/api/executions/${expected.execution.id}`);
    expect(execution.data).toMatchObject({ jobId: expected.job.id, status: expected.execution.status });
    const history = await read(`/api/history?jobId=${expected.job.id}`);
    expect(history.executions).toEqual(expected.history.executions);
  });

  it('keeps the changed system task schedules and their last runs', async () => {
    const tasks = (await read('/api/settings/system-tasks')) as Expected['systemTasks'];
    const byTask = new Map(tasks.map((task) => [task.task, task]));
    for (const old of expected.systemTasks) {
      expect(byTask.get(old.task), old.task).toMatchObject({ enabled: old.enabled, schedule: old.schedule, lastRunAt: old.lastRunAt });
    }
    expect(byTask.get('CLEAN_OLD_LOGS')).toMatchObject({ enabled: false, schedule: '15 4 * * 1', nextRunAt: null });
  });

  it('opens the credential with the directory\'s system key and accepts the API key', async () => {
    const revealed = await call('POST', `/api/credentials/${expected.credential.id}/reveal`);
    expect(revealed.status, JSON.stringify(revealed.body)).toBe(200);
    expect(revealed.body).toMatchObject({ type: expected.credential.type, data: { username: expected.credential.username, password: expected.credential.password } });

    const keys = (await read('/api/api-keys')).apiKeys as Array<{ id: string; name: string }>;
    expect(keys).toContainEqual(expect.objectContaining({ id: expected.apiKey.id, name: expected.apiKey.name }));
    const asKey = await call('GET', `/api/jobs/${expected.job.id}`, { bearer: expected.apiKey.key });
    expect(asKey.status, JSON.stringify(asKey.body)).toBe(200);
    expect(asKey.body.id).toBe(expected.job.id);
  });
});
