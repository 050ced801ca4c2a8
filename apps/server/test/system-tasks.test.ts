// The system task schedules on the assembled server, now kept by observability (issue 40 item 1): the routes answer
// as they did when the catalog served them (list, 400 for a bad schedule, one or several changes), the runner plans
// the stored schedule, and the catalog's configuration export and import carry the schedules through
// TOKENS.SystemTaskSchedules (both dialects).
import { OBSERVABILITY } from '@holdfast/observability';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startFullServer, type Caller, type FullServer } from './support/full-server.js';

interface TaskView {
  task: string;
  enabled: boolean;
  schedule: string;
  lastRunAt: string | null;
  nextRunAt: string | null;
}

describe.each(['sqlite', 'postgresql'] as const)('system task schedules on the assembled server (%s)', (dialect) => {
  let server: FullServer;
  let admin: Caller;
  const call = async (method: string, path: string, body?: unknown, status = 200) => {
    const answer = await server.call(method, path, admin, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(status);
    return answer.body;
  };
  const taskOf = async (task: string): Promise<TaskView> => ((await call('GET', '/api/settings/system-tasks')) as TaskView[]).find((view) => view.task === task)!;

  beforeAll(async () => {
    server = await startFullServer(dialect);
    admin = await server.signIn(ADMIN.email, ADMIN.password);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it('lists, validates and changes the schedules as before; the runner plans what is stored', async () => {
    const tasks = (await call('GET', '/api/settings/system-tasks')) as TaskView[];
    expect(tasks.map((view) => view.task)).toEqual(['CLEAN_OLD_LOGS', 'HEALTH_CHECK', 'REFRESH_STORAGE_STATS', 'UPDATE_DB_VERSIONS']);
    expect(tasks.every((view) => view.enabled && view.nextRunAt !== null)).toBe(true);
    expect((await call('POST', '/api/settings/system-tasks', { task: 'HEALTH_CHECK', schedule: 'every minute' }, 400)).error).toMatch(/body\.tasks\[0\]\.schedule/);
    expect((await server.call('POST', '/api/settings/system-tasks', admin, { task: 'HEALTH_CHECK', extra: 1 })).status).toBe(400);
    expect((await server.call('PUT', '/api/settings/system-tasks', admin, { tasks: [{ task: 'NO_SUCH_TASK' }] })).status).toBe(400);
    expect((await server.call('GET', '/api/settings/system-tasks')).status).toBe(401);

    const updated = (await call('PUT', '/api/settings/system-tasks', { tasks: [{ task: 'HEALTH_CHECK', schedule: '*/5 * * * *', enabled: false }] })) as TaskView[];
    expect(updated.find((view) => view.task === 'HEALTH_CHECK')).toMatchObject({ enabled: false, schedule: '*/5 * * * *', nextRunAt: null });
    const one = (await call('POST', '/api/settings/system-tasks', { task: 'CLEAN_OLD_LOGS', schedule: '45 1 * * *' })) as TaskView[];
    expect(one.find((view) => view.task === 'CLEAN_OLD_LOGS')).toMatchObject({ enabled: true, schedule: '45 1 * * *', nextRunAt: expect.any(String) });

    const runner = server.handle.container.resolve(OBSERVABILITY).runner;
    await runner.reload();
    const plan = runner.plan().map((entry) => [entry.task, entry.schedule]);
    expect(plan).toContainEqual(['CLEAN_OLD_LOGS', '45 1 * * *']);
    expect(plan.map(([task]) => task)).not.toContain('HEALTH_CHECK');
  });

  it('the configuration export carries the schedules and an import restores them', async () => {
    await call('PUT', '/api/settings/system-tasks', { tasks: [{ task: 'UPDATE_DB_VERSIONS', schedule: '10 5 * * *', enabled: false }] });
    const exported = await call('GET', '/api/config/export');
    expect(exported.records.systemTasks).toContainEqual({ task: 'UPDATE_DB_VERSIONS', enabled: false, schedule: '10 5 * * *', lastRunAt: null });
    expect(exported.records.systemTasks.map((task: { task: string }) => task.task)).toEqual(['CLEAN_OLD_LOGS', 'HEALTH_CHECK', 'REFRESH_STORAGE_STATS', 'UPDATE_DB_VERSIONS']);

    await call('PUT', '/api/settings/system-tasks', { tasks: [{ task: 'UPDATE_DB_VERSIONS', schedule: '0 4 * * *', enabled: true }] });
    const imported = await call('POST', '/api/config/import', { document: exported, mode: 'merge' });
    expect(imported.warnings).not.toContainEqual(expect.stringMatching(/System task/));
    expect(await taskOf('UPDATE_DB_VERSIONS')).toMatchObject({ enabled: false, schedule: '10 5 * * *', nextRunAt: null });
  });
});
