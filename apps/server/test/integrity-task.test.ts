// Issue 19: the INTEGRITY_CHECK system task (observability plugin) on the assembled server. It is off by default and
// planned once enabled; run-now queues a real IntegrityCheck execution through the engine's port and waits for it;
// with a byte budget each run stops once it has read that much, and the next run starts with the backups the
// previous one did not reach. A flipped byte makes the check Partial while the task itself succeeds (the problem is
// the check's finding, reported by the integrity notification, not a task failure).
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OBSERVABILITY } from '@holdfast/observability';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('INTEGRITY_CHECK system task on the assembled server (sqlite)', () => {
  let server: FullServer;
  let admin: Caller;
  let work: string;
  let storageDir: string;
  let jobId: string;
  /** Backup files in the order integrity checks visit them (destination id, then key). */
  let files: string[] = [];
  const sizes: Record<string, number> = {};

  const call = async (method: string, path: string, body?: unknown, status = 200) => {
    const answer = await server.call(method, path, admin, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(status);
    return answer.body;
  };
  const runTask = async () => {
    const started = await call('POST', '/api/settings/system-tasks/INTEGRITY_CHECK/run', undefined, 202);
    expect(started).toMatchObject({ task: 'INTEGRITY_CHECK', trigger: 'Manual', status: 'Running' });
    return until('INTEGRITY_CHECK run', async () => {
      const page = await call('GET', '/api/settings/system-tasks/runs?task=INTEGRITY_CHECK&pageSize=5');
      const run = page.runs.find((candidate: { id: string }) => candidate.id === started.id);
      return run && run.status !== 'Running' ? run : undefined;
    });
  };
  /** The IntegrityCheck execution a task run queued (its id is in the run message) and the files it found ok. */
  const checkOf = async (run: { message: string }) => {
    const executionId = /^integrity check ([0-9a-f-]{36}) ended /.exec(run.message)?.[1];
    expect(executionId, run.message).toBeDefined();
    const execution = (await call('GET', `/api/executions/${executionId}?includeLogs=true`)).data;
    const lines: string[] = execution.logs.map((entry: { message: string }) => entry.message);
    const visited = lines.filter((line) => / on disk: /.test(line)).map((line) => line.split(' on disk: ')[0]!);
    return { execution, lines, visited };
  };

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'holdfast-integrity-task-'));
    const tree = join(work, 'tree');
    storageDir = join(work, 'storage');
    await mkdir(tree);
    await mkdir(storageDir);
    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const source = await call('POST', '/api/adapters', { name: 'files', type: 'database', adapterId: 'directory', config: { paths: [tree] } }, 201);
    const storage = await call('POST', '/api/adapters', { name: 'disk', type: 'storage', adapterId: 'local', config: { path: storageDir } }, 201);
    jobId = (await call('POST', '/api/jobs', { name: 'files', schedule: '0 3 * * *', sourceId: source.id, compression: 'NONE', destinations: [{ configId: storage.id }] }, 201)).id;
    // Three backups of a growing tree (incompressible bytes, so the files are tens of kilobytes each).
    for (let index = 0; index < 3; index++) {
      await writeFile(join(tree, `part-${index}.bin`), randomBytes(40_000));
      const queued = await call('POST', `/api/jobs/${jobId}/run`, {});
      const done = await until('backup', async () => {
        const answer = await call('GET', `/api/executions/${queued.executionId}`);
        return ['Pending', 'Running'].includes(answer.data.status) ? undefined : answer.data;
      });
      expect(done.status).toBe('Success');
    }
    files = (await readdir(storageDir)).filter((name) => !name.endsWith('.meta.json')).sort();
    expect(files).toHaveLength(3);
    for (const file of files) sizes[file] = (await stat(join(storageDir, file))).size;
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('is off by default, planned once enabled, and refuses a bad schedule or budget with 400', async () => {
    const runner = server.handle.container.resolve(OBSERVABILITY).runner;
    expect((await call('GET', '/api/settings/observability')).integrityCheck).toEqual({ enabled: false, schedule: '0 5 * * *', byteBudget: 10 * 1024 ** 3 });
    await runner.reload();
    expect(runner.plan().map((entry) => entry.task)).not.toContain('INTEGRITY_CHECK');

    const enabled = await call('PUT', '/api/settings/observability', { integrityCheck: { enabled: true, schedule: '15 4 * * 0', byteBudget: 5_000_000 } });
    expect(enabled.integrityCheck).toEqual({ enabled: true, schedule: '15 4 * * 0', byteBudget: 5_000_000 });
    await runner.reload();
    expect(runner.plan()).toContainEqual(expect.objectContaining({ task: 'INTEGRITY_CHECK', schedule: '15 4 * * 0' }));

    const badCron = await server.call('PUT', '/api/settings/observability', admin, { integrityCheck: { enabled: true, schedule: 'every night', byteBudget: null } });
    expect(badCron.status).toBe(400);
    expect(JSON.stringify(badCron.body)).toContain('integrityCheck.schedule');
    expect((await server.call('PUT', '/api/settings/observability', admin, { integrityCheck: { enabled: true, schedule: '0 5 * * *', byteBudget: 0 } })).status).toBe(400);
    await call('PUT', '/api/settings/observability', { integrityCheck: { enabled: false, schedule: '0 5 * * *', byteBudget: null } });
    await runner.reload();
    expect(runner.plan().map((entry) => entry.task)).not.toContain('INTEGRITY_CHECK');
  });

  it('run-now queues an IntegrityCheck; with a byte budget the second run continues with the backups the first did not reach', async () => {
    // Room for the two smaller files: the first run reads them and stops; the largest one is left for the next run.
    const budget = sizes[files[0]!]! + sizes[files[1]!]!;
    await call('PUT', '/api/settings/observability', { integrityCheck: { enabled: false, schedule: '0 5 * * *', byteBudget: budget } });

    const first = await runTask();
    expect(first.status).toBe('Success');
    expect(first.message).toMatch(/ended Success: 2 backup\(s\) checked, \d+ bytes read, no problems; byte budget of \d+ bytes reached/);
    const one = await checkOf(first);
    expect(one.execution).toMatchObject({ type: 'IntegrityCheck', status: 'Success' });
    expect(one.lines[0]).toBe('IntegrityCheck run started (trigger Manual: INTEGRITY_CHECK system task)');
    expect(one.visited).toEqual([files[0], files[1]]);
    // Respected: it stopped as soon as it had read the budget (no backup started beyond it).
    expect(one.execution.size).toBe(budget);

    const second = await runTask();
    expect(second.status).toBe('Success');
    const two = await checkOf(second);
    // It starts with the backup the first run did not reach, then wraps around while its own budget lasts.
    expect(two.visited[0]).toBe(files[2]);
    const expected: string[] = [];
    let read = 0;
    for (const file of [files[2]!, files[0]!, files[1]!]) {
      if (read >= budget) break;
      expected.push(file);
      read += sizes[file]!;
    }
    expect(two.visited).toEqual(expected);
    expect(two.execution.size).toBe(read);
    expect(two.execution.size - sizes[expected.at(-1)!]!).toBeLessThan(budget);
    expect([...new Set([...one.visited, ...two.visited])].sort()).toEqual(files);
  });

  it('a flipped byte: the check is Partial and names the file, the task succeeds and reports the problem', async () => {
    await call('PUT', '/api/settings/observability', { integrityCheck: { enabled: false, schedule: '0 5 * * *', byteBudget: null } });
    const path = join(storageDir, files[1]!);
    const data = await readFile(path);
    data[Math.floor(data.length / 2)]! ^= 0x04;
    await writeFile(path, data);

    const run = await runTask();
    expect(run.status).toBe('Success');
    expect(run.message).toMatch(/ended Partial: 3 backup\(s\) checked, \d+ bytes read, 1 problem\(s\), integrity_check_failed raised; reached the end of the backups$/);
    const { execution, lines } = await checkOf(run);
    expect(execution.status).toBe('Partial');
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${files[1]!.replace(/\./g, '\\.')} on disk: checksum mismatch`)));
  });
});
