// The scheduler of the assembled server reads jobs through the catalog's port and queues a run at the next minute.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN, startFullServer, type FullServer } from './support/full-server.js';
import { databaseName, dropDatabase, seedDatabase } from './support/postgres-data.js';

describe('scheduled runs in the assembled server', () => {
  let server: FullServer | undefined;
  const cleanups: Array<() => Promise<unknown>> = [];

  afterAll(async () => {
    await server?.close();
    for (const cleanup of cleanups) await cleanup();
  });

  it('runs an every-minute job with trigger Scheduler, and never a disabled one', async () => {
    server = await startFullServer('sqlite');
    const admin = await server.signIn(ADMIN.email, ADMIN.password);
    const source = databaseName('sched');
    await seedDatabase(source, 10);
    cleanups.push(() => dropDatabase(source));
    const dir = await mkdtemp(join(tmpdir(), 'holdfast-scheduled-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const create = async (path: string, body: unknown) => {
      const answer = await server!.call('POST', path, admin, body);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201);
      return answer.body;
    };
    const pg = await create('/api/adapters', { name: 'db', type: 'database', adapterId: 'postgres', config: { user: 'root' } });
    const disk = await create('/api/adapters', { name: 'disk', type: 'storage', adapterId: 'local', config: { path: dir } });
    const every = await create('/api/jobs', { name: 'every minute', schedule: '* * * * *', sourceId: pg.id, databases: [source], destinations: [{ configId: disk.id }] });
    const disabled = await create('/api/jobs', { name: 'switched off', schedule: '* * * * *', enabled: false, sourceId: pg.id, databases: [source], destinations: [{ configId: disk.id }] });

    const deadline = Date.now() + 75_000;
    let scheduled: Array<{ jobId: string; status: string; triggerType: string; triggerLabel: string }> = [];
    while (Date.now() < deadline) {
      scheduled = (await server.call('GET', '/api/history?trigger=Scheduler', admin)).body.executions;
      if (scheduled.some((e) => e.status === 'Success')) break;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    expect(scheduled.length).toBeGreaterThanOrEqual(1);
    expect(scheduled.every((e) => e.jobId === every.id)).toBe(true);
    expect(scheduled.some((e) => e.jobId === disabled.id)).toBe(false);
    expect(scheduled[0]).toMatchObject({ triggerType: 'Scheduler', triggerLabel: 'Scheduler' });
    expect(scheduled.some((e) => e.status === 'Success')).toBe(true);
  }, 120_000);
});
