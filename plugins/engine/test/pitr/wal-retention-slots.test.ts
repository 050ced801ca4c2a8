// Slot clean-up (docs/pitr.md, "Retention"): a deleted point-in-time job, or one whose source left point-in-time
// mode, gets its replication slot dropped; a disabled one keeps it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JobSummary } from '@holdfast/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryJobCatalog } from '../support/doubles.js';
import { createTarget, type TestDatabaseTarget } from '../support/harness.js';
import { droppedStreams, scriptedLog, scriptedLogs } from './pitr-doubles.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

/** The catalog double with jobs that can be disabled. */
class TogglingCatalog extends InMemoryJobCatalog {
  readonly disabled = new Set<string>();
  override async listJobs(): Promise<JobSummary[]> {
    return (await super.listJobs()).map((job) => ({ ...job, enabled: !this.disabled.has(job.id) }));
  }
}

describe('replication slots of jobs that stop archiving (test double source, sqlite)', () => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let dir: string;
  const catalog = new TogglingCatalog();

  beforeAll(async () => {
    scriptedLogs.clear();
    droppedStreams.length = 0;
    target = await createTarget('sqlite');
    server = await startPitrServer(target, { catalog });
    dir = await mkdtemp(join(tmpdir(), 'hf-pitr-slots-'));
    catalog.addConfig({ configId: 'pg', name: 'Cluster', kind: 'source', adapterId: 'pitr-double', config: {} });
    catalog.addConfig({ configId: 'logical', name: 'Logical', kind: 'source', adapterId: 'pitr-double', config: { pointInTime: false } });
    catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    for (const id of ['deleted', 'disabled', 'to-logical']) catalog.addJob({ id, name: id }, 'pg', [{ configId: 'disk' }]);
    for (const id of ['deleted', 'disabled', 'to-logical']) await until(`stream of ${id} to open`, () => scriptedLog(id).opens.length === 1);
  });

  afterAll(async () => {
    await server.close();
    await target.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('a deleted job: the archiver stops, the slot is dropped and the stream row forgotten', async () => {
    expect((await server.changeLogs.streamFacts()).find((fact) => fact.jobId === 'deleted')?.sourceConfigId).toBe('pg');
    catalog.plans.delete('deleted');
    await until('the slot of the deleted job dropped', () => droppedStreams.includes('deleted'));
    expect(scriptedLog('deleted').closes).toHaveLength(1);
    await until('its stream row forgotten', async () => (await server.changeLogs.streamOf('deleted')) === null);
  });

  it('a disabled job stops streaming but keeps its slot (it resumes without a gap when enabled again)', async () => {
    catalog.disabled.add('disabled');
    await until('the disabled job to stop', () => scriptedLog('disabled').closes.length === 1);
    // Several supervisor passes (every 200 ms): still not dropped.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(droppedStreams).not.toContain('disabled');
    expect((await server.changeLogs.streamOf('disabled'))?.state).toBe('stopped');
    catalog.disabled.delete('disabled');
    await until('the job to stream again', () => scriptedLog('disabled').opens.length === 2);
    expect(droppedStreams).not.toContain('disabled');
  });

  it('a job whose source leaves point-in-time mode: its slot is dropped through the source it streamed from', async () => {
    catalog.addJob({ id: 'to-logical', name: 'to-logical' }, 'logical', [{ configId: 'disk' }]);
    await until('the slot of the job now logical dropped', () => droppedStreams.includes('to-logical'));
    expect(scriptedLog('to-logical').closes).toHaveLength(1);
    expect(scriptedLog('to-logical').opens).toHaveLength(1);
  });

  it('a deleted job no archiver of this process ran (another process streamed it, then died): dropped through the recorded source', async () => {
    await server.changeLogs.saveStream({ jobId: 'ghost', processId: 'gone-process', host: 'elsewhere', pid: 1, since: new Date(), state: 'failed', lastError: 'killed', updatedAt: new Date() });
    await server.changeLogs.saveStreamSource('ghost', 'pg');
    await until('the slot of the ghost job dropped', () => droppedStreams.includes('ghost'));
    await until('its stream row forgotten', async () => (await server.changeLogs.streamOf('ghost')) === null);
    expect(droppedStreams.filter((id) => id === 'ghost')).toHaveLength(1);
  });
});
