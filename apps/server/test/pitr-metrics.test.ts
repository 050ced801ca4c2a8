// Issue 43 items 4-5 on the assembled server with the real PITR test cluster (PostgreSQL 15, port 5433): a physical
// job streams WAL, `/metrics` shows its holdfast_pitr_* gauges with real values, and deleting the job drops its
// replication slot on the database server.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

const run = promisify(execFile);
const pitr = JSON.parse(readFileSync('/tmp/holdfast-test-services/postgres-pitr/postgres-pitr.json', 'utf8')) as { host: string; port: number; roles: Record<string, { user: string; password: string }> };
const repl = pitr.roles.repl!;

/** SQL on the PITR cluster as the replication role (pg_replication_slots is readable by every role). */
async function onCluster(sql: string): Promise<string> {
  const { stdout } = await run('psql', ['-h', pitr.host, '-p', String(pitr.port), '-U', repl.user, '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-Atc', sql], { env: { ...process.env, PGPASSWORD: repl.password } });
  return stdout.trim();
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

describe('point-in-time gauges and slot clean-up on the assembled server (PITR test cluster)', () => {
  let server: FullServer;
  let admin: Caller;
  let dest: string;
  let jobId = '';
  let slot = '';

  const call = async (method: string, path: string, body?: unknown, status = 200) => {
    const answer = await server.call(method, path, admin, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(status);
    return answer.body as Record<string, unknown> & { id: string };
  };
  const sampleOf = async (name: string) => {
    const text = (await server.call('GET', '/metrics', admin)).body as string;
    const family = parsePrometheusTextFormat(text).find((candidate) => candidate.name === name);
    const metric = family?.metrics.find((candidate) => candidate.labels?.job_id === jobId);
    return metric ? Number(metric.value) : undefined;
  };

  beforeAll(async () => {
    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    dest = await mkdtemp(join(tmpdir(), 'holdfast-pitr-metrics-'));
    const source = await call('POST', '/api/adapters', { name: 'pitr cluster', type: 'database', adapterId: 'postgres', config: { mode: 'physical', host: pitr.host, port: pitr.port, user: repl.user, password: repl.password, walFlushIntervalSeconds: 1 } }, 201);
    const local = await call('POST', '/api/adapters', { name: 'local', type: 'storage', adapterId: 'local', config: { path: dest } }, 201);
    const job = await call('POST', '/api/jobs', { name: `pitr metrics ${Date.now()}`, schedule: '0 3 * * *', sourceId: source.id, databases: [], compression: 'ZSTD', destinations: [{ configId: local.id }] }, 201);
    jobId = job.id;
    slot = `holdfast_${jobId.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`.slice(0, 63);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    // Whatever happened, the shared cluster keeps no slot of this test.
    if (slot) await onCluster(`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name LIKE '${slot.slice(0, 40)}%' AND NOT active`).catch(() => undefined);
    if (dest) await rm(dest, { recursive: true, force: true });
  });

  it('a base backup and the WAL stream show as gauges; deleting the job drops its slot', async () => {
    await until('the slot to exist', async () => ((await onCluster(`SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE '${slot.slice(0, 40)}%'`)) === '1' ? true : undefined));
    const queued = await call('POST', `/api/jobs/${jobId}/run`, {});
    const executionId = String(queued.executionId);
    let last: unknown;
    const ended = await until('the base backup to end', async () => {
      const execution = (await call('GET', `/api/executions/${executionId}`)).data as { status: string };
      last = execution;
      return ['Success', 'Partial', 'Failed'].includes(String(execution.status)) ? execution : undefined;
    }, 180_000).catch((error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(last)}`);
    });
    expect(ended.status, JSON.stringify(ended)).toBe('Success');
    await onCluster('SELECT pg_switch_wal()').catch(() => undefined);

    const end = await until('a window end in /metrics', () => sampleOf('holdfast_pitr_window_end_timestamp_seconds'));
    expect(end * 1000).toBeGreaterThan(Date.now() - 5 * 60_000);
    expect(end * 1000).toBeLessThanOrEqual(Date.now() + 1_000);
    const start = (await sampleOf('holdfast_pitr_window_start_timestamp_seconds'))!;
    expect(start).toBeLessThanOrEqual(end);
    expect(await sampleOf('holdfast_pitr_segments')).toBeGreaterThanOrEqual(1);
    expect(await sampleOf('holdfast_pitr_stored_bytes')).toBeGreaterThan(0);
    const recoveryPoint = (await sampleOf('holdfast_pitr_recovery_point_seconds'))!;
    expect(recoveryPoint).toBeGreaterThanOrEqual(0);
    expect(recoveryPoint).toBeLessThan(300);
    const lag = await until('a slot lag reading', () => sampleOf('holdfast_pitr_slot_lag_bytes'));
    expect(lag).toBeGreaterThanOrEqual(0);

    await call('DELETE', `/api/jobs/${jobId}`);
    await until('the slot dropped on the server', async () => ((await onCluster(`SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE '${slot.slice(0, 40)}%'`)) === '0' ? true : undefined), 60_000);
  }, 400_000);
});
