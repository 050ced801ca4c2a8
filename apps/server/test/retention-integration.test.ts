// Issue "Retention and naming", acceptance 4: 30 simulated daily backups on a local destination with a 7-daily policy;
// the preview predicts what the run's retention stage then does, file by file.
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type FullServer } from './support/full-server.js';
import { databaseName, dropDatabase, seedDatabase } from './support/postgres-data.js';

const DAY_MS = 86_400_000;

describe('retention stage on a job with 30 simulated daily backups', () => {
  let server: FullServer | undefined;
  const cleanups: Array<() => Promise<unknown>> = [];

  afterAll(async () => {
    await server?.close();
    for (const cleanup of cleanups) await cleanup();
  });

  it('keeps exactly the 7 newest days and their sidecars, as the preview predicted', async () => {
    server = await startFullServer('sqlite');
    const admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const source = databaseName('ret');
    await seedDatabase(source, 50);
    cleanups.push(() => dropDatabase(source));
    const dir = await mkdtemp(join(tmpdir(), 'holdfast-retention-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));

    const created = async (path: string, body: unknown) => {
      const answer = await server!.call('POST', path, admin, body);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201);
      return answer.body;
    };
    const pg = await created('/api/adapters', { name: 'db', type: 'database', adapterId: 'postgres', config: { user: 'root' } });
    const local = await created('/api/adapters', { name: 'disk', type: 'storage', adapterId: 'local', config: { path: dir } });
    const policy = await created('/api/retention-policies', { name: 'Seven days', config: { mode: 'gfs', daily: 7 } });
    const job = await created('/api/jobs', {
      name: 'nightly',
      schedule: '0 3 * * *',
      sourceId: pg.id,
      databases: [source],
      destinations: [{ configId: local.id, retentionPolicyId: policy.id }],
    });

    // 30 backups, one a day at noon UTC, each with the sidecar a run would have written.
    const today = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS);
    const simulated: string[] = [];
    for (let age = 1; age <= 30; age++) {
      const createdAt = new Date(today.getTime() - age * DAY_MS + 12 * 3_600_000);
      const key = `nightly_${createdAt.toISOString().slice(0, 10)}_12-00-00.dump`;
      simulated.push(key);
      const content = Buffer.from(`backup of day -${age}`);
      await writeFile(join(dir, key), content);
      const sidecar = {
        formatVersion: 1,
        createdAt: createdAt.toISOString(),
        sha256: createHash('sha256').update(content).digest('hex'),
        md5: createHash('md5').update(content).digest('hex'),
        size: content.length,
        locked: false,
        trigger: { type: 'Scheduler' },
        compression: { codec: 'NONE', extension: '' },
        encryption: null,
        source: { kind: 'source', adapterId: 'postgres', configId: pg.id },
        databases: [source],
        jobId: job.id,
        jobName: 'nightly',
        executionId: `simulated-${age}`,
      };
      await writeFile(join(dir, `${key}.meta.json`), JSON.stringify(sidecar));
    }
    const newestSeven = simulated.slice(0, 7);
    const olderTwentyThree = simulated.slice(7);

    const preview = await server.call('GET', `/api/jobs/${job.id}/retention-preview`, admin);
    expect(preview.status).toBe(200);
    const [destination] = preview.body.data as Array<{ error: string | null; backups: Array<{ key: string; action: string; reason: string }> }>;
    expect(destination!.error).toBeNull();
    const predictedKeep = destination!.backups.filter((b) => b.action === 'keep').map((b) => b.key).sort();
    const predictedPrune = destination!.backups.filter((b) => b.action === 'prune').map((b) => b.key).sort();
    expect(predictedKeep).toEqual([...newestSeven].sort());
    expect(predictedPrune).toEqual([...olderTwentyThree].sort());
    for (const backup of destination!.backups) expect(backup.reason.length).toBeGreaterThan(0);

    // A locked run adds its own backup without taking a daily slot, so the simulated seven stay the kept ones.
    const trigger = await server.call('POST', `/api/jobs/${job.id}/run`, admin, { lock: true });
    expect(trigger.status).toBe(200);
    let execution: any;
    for (let i = 0; i < 400; i++) {
      execution = (await server.call('GET', `/api/executions/${trigger.body.executionId}?includeLogs=true`, admin)).body.data;
      if (!['Pending', 'Running'].includes(execution.status)) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(execution.status, JSON.stringify(execution.logs?.slice(-5))).toBe('Success');
    const deletions = (execution.logs as Array<{ stage: string; message: string }>).filter((l) => l.stage === '05-retention' && /delet/i.test(l.message));
    expect(deletions.length).toBeGreaterThanOrEqual(olderTwentyThree.length);

    const remaining = (await readdir(dir)).filter((name) => !name.startsWith('.')).sort();
    const runFile = execution.path.split('/').pop() as string;
    expect(remaining).toEqual([...newestSeven.flatMap((key) => [key, `${key}.meta.json`]), runFile, `${runFile}.meta.json`].sort());
  });
});
