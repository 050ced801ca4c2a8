// Issue 18, acceptance 1: several `node dist/main.js` processes on one PostgreSQL share the queue, the scheduler,
// rate limits and download tokens. Three full processes (role all) and one `api` process run 60 queued backups with
// maxConcurrentJobs = 4 (the Running count is sampled from the database), none twice; two every-minute jobs fire
// once per slot (scheduler time compressed 30x: a minute every 2 s); the scheduler's process is SIGKILLed mid-run,
// and only its runs fail (closed by the others, naming the process), while the rest, and the schedule, go on. A
// download link created through one process is redeemed through another.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnNode, type SpawnedProcess } from '@holdfast/tooling/harness/spawned-process';
import { createThrowawayPostgres, type ThrowawayDatabase } from '@holdfast/tooling/harness/test-site';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const ADMIN = { name: 'Admin', email: 'admin@example.test', password: 'correct horse battery staple' };
/** Scheduler time runs this much faster than the wall clock: a cron minute every 2 s. */
const TIME_SCALE = 30;
const SLOT_MS = 60_000;
const QUEUED_RUNS = 60;
const MAX_CONCURRENT = 4;

interface Server {
  name: string;
  process: SpawnedProcess;
  url: string;
  /** The engine's id, as `executions.claimed_by` records it. */
  engineId: string;
}

interface Caller {
  cookie: string;
  csrf: string;
}

interface LogLine {
  msg: string;
  [key: string]: unknown;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function logLines(server: Server): LogLine[] {
  return server.process.stdoutLines.flatMap((line) => {
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

describe('scale-out: four server processes on one PostgreSQL', () => {
  let postgres: ThrowawayDatabase;
  let db: pg.Pool;
  const servers: Server[] = [];
  const dirs: string[] = [];
  let isSampling = false;
  let sampler: Promise<void> | undefined;

  beforeAll(() => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: build first (npx turbo run build --filter=@holdfast/server...)`);
  });

  afterAll(async () => {
    isSampling = false;
    await sampler?.catch(() => undefined);
    for (const server of servers) if (server.process.child.exitCode === null && server.process.child.signalCode === null) server.process.child.kill('SIGKILL');
    await Promise.all(servers.map((server) => server.process.exited));
    await db?.end();
    await postgres?.drop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  async function start(name: string, env: NodeJS.ProcessEnv): Promise<Server> {
    const dataDir = await mkdtemp(join(tmpdir(), `holdfast-scale-${name}-`));
    dirs.push(dataDir);
    const process = spawnNode(MAIN, [], { ...env, HOLDFAST_DATA_DIR: dataDir });
    const listening = (await process.waitForLog('holdfast listening', 60_000)) as unknown as { port: number };
    const engine = (await process.waitForLog('engine started', 5_000)) as unknown as { processId: string };
    const server = { name, process, url: `http://127.0.0.1:${listening.port}`, engineId: engine.processId };
    servers.push(server);
    return server;
  }

  async function call(server: Server, method: string, path: string, caller?: Caller, body?: unknown): Promise<{ status: number; body: any }> {
    const headers: Record<string, string> = {};
    if (caller) Object.assign(headers, { cookie: caller.cookie, 'x-csrf-token': caller.csrf });
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  async function rows<T>(sql: string, values: unknown[] = []): Promise<T[]> {
    return (await db.query(sql, values)).rows as T[];
  }

  it('shares queue, scheduler, rate limits and download tokens; a killed process fails only its own runs', async () => {
    postgres = await createThrowawayPostgres();
    db = new pg.Pool({ connectionString: postgres.url, max: 2 });
    // An idle pooled connection that PostgreSQL closes is reported here, not as an uncaught error; queries still fail.
    db.on('error', (error) => console.warn(`test pool: idle connection lost: ${error.message}`));
    const work = await mkdtemp(join(tmpdir(), 'holdfast-scale-work-'));
    dirs.push(work);
    const sourceDir = join(work, 'source');
    const destDir = join(work, 'backups');
    await mkdir(sourceDir);
    await mkdir(destDir);
    // Tiny but not trivial: a run takes long enough to be caught Running by the kill below.
    await writeFile(join(sourceDir, 'data.bin'), randomBytes(3 * 1024 * 1024));
    await writeFile(join(sourceDir, 'notes.txt'), 'scale-out\n'.repeat(1_000));

    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      PORT: '0',
      DATABASE_URL: postgres.url,
      // Replicas of one installation share the system key.
      HOLDFAST_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      HOLDFAST_LOCAL_ROOTS: work,
      LOG_LEVEL: 'info',
      HOLDFAST_ENGINE_POLL_MS: '1000',
      HOLDFAST_ENGINE_HEARTBEAT_MS: '300',
      HOLDFAST_ENGINE_STALE_MS: '2000',
      HOLDFAST_ENGINE_SHUTDOWN_GRACE_MS: '2000',
      HOLDFAST_SCHEDULER_RELOAD_MS: '500',
      HOLDFAST_SCHEDULER_LEADER_RETRY_MS: '500',
      HOLDFAST_SCHEDULER_TIME_SCALE: String(TIME_SCALE),
      HOLDFAST_SCHEDULER_TIME_ORIGIN: new Date().toISOString(),
    };
    // The first process migrates the database and becomes the scheduler; the others join it.
    const first = await start('one', env);
    expect((await fetch(`${first.url}/api/auth/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })).status).toBe(201);
    const signIn = await fetch(`${first.url}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: ADMIN.email, password: ADMIN.password }) });
    const admin: Caller = { cookie: (signIn.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: ((await signIn.json()) as { csrfToken: string }).csrfToken };
    // One settings write through one process reaches all: the concurrency limit, and rate limits lifted for a suite
    // that sends hundreds of requests from one address (the shared limiter itself is shared-rate-limit.test.ts).
    const settings = await call(first, 'PUT', '/api/settings', admin, { maxConcurrentJobs: MAX_CONCURRENT, authPoints: 10_000, apiPoints: 100_000, mutationPoints: 100_000 });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    const settingsWritten = Date.now();
    const [two, three, api] = await Promise.all([start('two', env), start('three', env), start('api', { ...env, HOLDFAST_ROLE: 'api' })]);
    expect(logLines(first).some((line) => line.msg === 'scheduler: this process is the scheduler')).toBe(true);
    // Settings are cached for 5 s per process; the first process read them before the write.
    await sleep(Math.max(0, settingsWritten + 5_500 - Date.now()));

    const create = async (path: string, body: unknown) => {
      const answer = await call(two, 'POST', path, admin, body);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201);
      return answer.body as { id: string };
    };
    const source = await create('/api/adapters', { name: 'files', type: 'database', adapterId: 'directory', config: { paths: [sourceDir] } });
    const disk = await create('/api/adapters', { name: 'disk', type: 'storage', adapterId: 'local', config: { path: destDir } });
    const job = (name: string, schedule: string) => create('/api/jobs', { name, schedule, sourceId: source.id, compression: 'GZIP', destinations: [{ configId: disk.id, priority: 0 }] });
    const queuedJobs = [];
    for (let i = 0; i < QUEUED_RUNS / 3; i++) queuedJobs.push(await job(`queued ${i}`, '0 3 1 1 *'));
    const scheduledJobs = [await job('every minute a', '* * * * *'), await job('every minute b', '* * * * *')];

    // Sample the Running count from the database for the whole run.
    isSampling = true;
    const samples: number[] = [];
    sampler = (async () => {
      while (isSampling) {
        samples.push((await rows<{ n: number }>(`SELECT count(*)::int AS n FROM executions WHERE status = 'Running'`))[0]!.n);
        await sleep(25);
      }
    })();

    // 60 runs, triggered through the api process (which queues but never runs them).
    const triggered: string[] = [];
    for (let round = 0; round < 3; round++) {
      for (const queued of queuedJobs) {
        const answer = await call(api, 'POST', `/api/jobs/${queued.id}/run`, admin);
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        triggered.push(answer.body.executionId);
      }
    }

    // Mid-run: the scheduler's process holds a Running backup and part of the queue is done. Kill it.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const [state] = await rows<{ mine: number; done: number }>(
        `SELECT count(*) FILTER (WHERE status = 'Running' AND claimed_by = $1)::int AS mine, count(*) FILTER (WHERE status = 'Success')::int AS done FROM executions`,
        [first.engineId],
      );
      if (state!.mine > 0 && state!.done >= 8) break;
      if (Date.now() > deadline) throw new Error(`the first process never held a run: ${JSON.stringify(state)}`);
      await sleep(10);
    }
    first.process.child.kill('SIGKILL');
    const killedAt = Date.now();
    await first.process.exited;

    // Everything triggered ends; then the schedule must keep going under the new scheduler.
    const settled = async () => {
      for (;;) {
        const [open] = await rows<{ n: number }>(`SELECT count(*)::int AS n FROM executions WHERE id = ANY($1) AND status IN ('Pending', 'Running')`, [triggered]);
        if (open!.n === 0) return;
        if (Date.now() > deadline + 30_000) throw new Error(`${open!.n} runs never finished`);
        await sleep(200);
      }
    };
    await settled();
    const settledAt = new Date();
    const killedSlot = Math.floor((killedAt - Date.parse(env.HOLDFAST_SCHEDULER_TIME_ORIGIN!)) * TIME_SCALE / SLOT_MS);
    // Once the backlog is gone, each every-minute job runs at its slots again (two more successful runs each).
    for (;;) {
      const ran = await rows<{ job_id: string; n: number }>(
        `SELECT job_id, count(*)::int AS n FROM executions WHERE trigger_type = 'Scheduler' AND status = 'Success' AND created_at > $1 GROUP BY job_id`,
        [settledAt],
      );
      if (ran.length === scheduledJobs.length && ran.every((row) => row.n >= 2)) break;
      if (Date.now() > deadline + 45_000) throw new Error(`the schedule did not continue after the scheduler was killed: ${JSON.stringify(ran)}`);
      await sleep(250);
    }
    // A download link created through one process is redeemed through another, once.
    const listing = await call(two, 'GET', `/api/storage/${disk.id}/files?refresh=true`, admin);
    expect(listing.status, JSON.stringify(listing.body)).toBe(200);
    const file = (listing.body as Array<{ path: string }>)[0]!.path;
    const link = await call(two, 'POST', `/api/storage/${disk.id}/download-url`, admin, { file, decrypt: false });
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    const download = await fetch(`${api.url}${link.body.url}`);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(await readFile(join(destDir, file)))).toBe(true);
    expect((await fetch(`${three.url}${link.body.url}`)).status).toBe(401);
    expect((await fetch(`${two.url}${link.body.url}`)).status).toBe(401);

    // Stop the survivors gracefully (they finish what runs), so every row is final.
    for (const server of [two, three, api]) server.process.child.kill('SIGTERM');
    // A clean exit: the listening and scheduler-lock connections were handed back before the pool closed.
    expect(await Promise.all([two, three, api].map((server) => server.process.exited))).toEqual(Array(3).fill({ code: 0, signal: null }));
    isSampling = false;
    await sampler;

    const all = await rows<{ id: string; job_id: string; status: string; claimed_by: string | null; trigger_type: string; scheduled_for: Date | null; error: string | null; path: string | null; metadata: string | null }>(
      `SELECT id, job_id, status, claimed_by, trigger_type, scheduled_for, error, path, metadata FROM executions`,
    );
    const byId = new Map(all.map((row) => [row.id, row]));

    // Never more than maxConcurrentJobs Running, and the limit was used.
    expect(samples.length).toBeGreaterThan(100);
    expect(Math.max(...samples)).toBe(MAX_CONCURRENT);

    // None ran twice: one "run started" per execution, one backup file per successful run.
    const starts = await rows<{ execution_id: string; n: number }>(`SELECT execution_id, count(*)::int AS n FROM execution_logs WHERE message LIKE 'Backup run started%' GROUP BY execution_id`);
    expect(starts.filter((row) => row.n !== 1)).toEqual([]);
    const successes = all.filter((row) => row.status === 'Success');
    const files = (await readdir(destDir)).filter((name) => !name.endsWith('.meta.json') && !name.startsWith('.'));
    // Every file is a successful run's backup, or the complete backup (data and sidecar) of a run the kill cut off
    // after its upload finished, which the reaper keeps by design (nothing lost); a killed run's partial object is gone.
    const killedTargets = all
      .filter((row) => row.status === 'Failed')
      .map((row) => (JSON.parse(row.metadata ?? '{}') as { target?: { key: string } }).target?.key)
      .filter((key): key is string => key !== undefined);
    const keptComplete = killedTargets.filter((key) => files.includes(key));
    for (const key of keptComplete) expect(existsSync(join(destDir, `${key}.meta.json`)), `${key} kept without its sidecar`).toBe(true);
    expect([...files].sort()).toEqual([...successes.map((row) => row.path!), ...keptComplete].sort());

    // The api process queued every triggered run and ran none; the three full processes all ran some.
    expect(all.some((row) => row.claimed_by === api.engineId)).toBe(false);
    expect(logLines(api).some((line) => line.msg === 'scheduler: this process is the scheduler')).toBe(false);
    const ranBy = new Set(all.map((row) => row.claimed_by));
    for (const server of [first, two, three]) expect(ranBy.has(server.engineId), `${server.name} ran nothing`).toBe(true);

    // Killing the first process failed only its runs, closed by another process with a message naming it.
    const triggeredRows = triggered.map((id) => byId.get(id)!);
    const failed = all.filter((row) => row.status !== 'Success');
    expect(failed.length).toBeGreaterThanOrEqual(1);
    for (const row of failed) {
      expect(row.claimed_by, `${row.id} ${row.status} ${row.error}`).toBe(first.engineId);
      expect(row.status).toBe('Failed');
      expect(row.error).toMatch(new RegExp(`^interrupted: the server process ${first.engineId} stopped \\(no heartbeat for more than 2 s\\); another server process closed this run$`));
    }
    expect(triggeredRows.filter((row) => row.status === 'Success').length).toBe(QUEUED_RUNS - failed.filter((row) => row.trigger_type !== 'Scheduler').length);

    // Each scheduled job fired once per slot: every slot from its first to its last was queued (at most once) or
    // skipped because the job's previous scheduled run was still waiting, including the slots around the kill.
    const origin = Date.parse(env.HOLDFAST_SCHEDULER_TIME_ORIGIN!);
    const slotOf = (at: Date | string) => Math.round((new Date(at).getTime() - origin) / SLOT_MS);
    const skipped = servers.flatMap(logLines).filter((line) => line.msg === 'scheduler: previous scheduled run still pending; not queued again' || line.msg === 'scheduler: slot already queued (by the previous scheduler); not queued again');
    for (const scheduled of scheduledJobs) {
      const queuedSlots = all.filter((row) => row.job_id === scheduled.id && row.trigger_type === 'Scheduler').map((row) => slotOf(row.scheduled_for!));
      expect(new Set(queuedSlots).size).toBe(queuedSlots.length);
      const covered = new Set([...queuedSlots, ...skipped.filter((line) => line.jobId === scheduled.id).map((line) => slotOf(line.slot as string))]);
      const firstSlot = Math.min(...covered);
      const lastSlot = Math.max(...covered);
      expect(lastSlot).toBeGreaterThanOrEqual(killedSlot + 3);
      const missing = Array.from({ length: lastSlot - firstSlot + 1 }, (_, i) => firstSlot + i).filter((slot) => !covered.has(slot));
      expect(missing, `slots of ${scheduled.id} never fired`).toEqual([]);
      expect(queuedSlots.length).toBeGreaterThanOrEqual(3);
      console.log(`scale-out: ${scheduled.id}: slots ${firstSlot}..${lastSlot}, queued ${queuedSlots.length}, killed in slot ${killedSlot}`);
    }
    console.log(`scale-out: samples ${samples.length}, max Running ${Math.max(...samples)}, failed by the kill ${failed.length}, successes ${successes.length}`);
    // The scheduler moved to a surviving full process, never to the api process.
    expect([two, three].some((server) => logLines(server).some((line) => line.msg === 'scheduler: this process is the scheduler'))).toBe(true);
  }, 150_000);
});
