// The observability plugin on the assembled server: system tasks run on demand and recorded, adapter health moving
// ONLINE -> DEGRADED -> OFFLINE -> ONLINE for a real local destination whose folder disappears and comes back, the
// events reaching a generic-webhook channel with notification log entries (a disabled event sends nothing), the
// configuration self-backup with retention, and Prometheus metrics moving with real backup runs.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKENS } from '@holdfast/kernel';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';
import { databaseName, dropDatabase, seedDatabase } from './support/postgres-data.js';

interface Hook {
  eventType: string;
  title: string;
  fields: Array<{ name: string; value: string }>;
}

async function startReceiver(hooks: Hook[]): Promise<{ url: string; close(): Promise<void> }> {
  const http: Server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      hooks.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Hook);
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/hook`,
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

const KEY_HEX = 'a1'.repeat(32);

describe.each(['sqlite', 'postgresql'] as const)('observability on the assembled server (%s)', (dialect) => {
  const hooks: Hook[] = [];
  const source = databaseName(`observe_${dialect.slice(0, 2)}`);
  const folders: string[] = [];
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let server: FullServer;
  let admin: Caller;
  let ids: { pg: string; local: string; backups: string; hook: string; job: string; vault: string };

  const call = async (method: string, path: string, body?: unknown, expected = 200) => {
    const answer = await server.call(method, path, admin, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(expected);
    return answer.body;
  };
  /** Runs a task through run-now and waits for its recorded outcome. */
  const runTask = async (task: string) => {
    const started = await call('POST', `/api/settings/system-tasks/${task}/run`, undefined, 202);
    expect(started).toMatchObject({ task, trigger: 'Manual' });
    return until(`${task} run`, async () => {
      const page = await call('GET', `/api/settings/system-tasks/runs?task=${task}&pageSize=5`);
      const run = page.runs.find((candidate: { id: string }) => candidate.id === started.id);
      return run && run.status !== 'Running' ? run : undefined;
    });
  };
  const backup = async () => {
    const queued = await call('POST', `/api/jobs/${ids.job}/run`, {});
    return until('backup', async () => {
      const answer = await call('GET', `/api/executions/${queued.executionId}`);
      return ['Pending', 'Running'].includes(answer.data.status) ? undefined : answer.data;
    }, 60_000);
  };
  const hooksOf = (eventType: string) => hooks.filter((hook) => hook.eventType === eventType);

  beforeAll(async () => {
    receiver = await startReceiver(hooks);
    server = await startFullServer(dialect);
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    await seedDatabase(source, 20);
    const local = await mkdtemp(join(tmpdir(), 'holdfast-observe-local-'));
    const backups = await mkdtemp(join(tmpdir(), 'holdfast-observe-config-'));
    folders.push(local, backups, `${local}.away`);
    const pg = await call('POST', '/api/adapters', { name: 'pg', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' } }, 201);
    const localDest = await call('POST', '/api/adapters', { name: 'local', type: 'storage', adapterId: 'local', config: { path: local } }, 201);
    const backupDest = await call('POST', '/api/adapters', { name: 'config backups', type: 'storage', adapterId: 'local', config: { path: backups } }, 201);
    const hook = await call('POST', '/api/adapters', { name: 'ops hook', type: 'notification', adapterId: 'generic-webhook', config: { webhookUrl: receiver.url } }, 201);
    const job = await call('POST', '/api/jobs', { name: 'orders', schedule: '0 3 * * *', sourceId: pg.id, databases: [source], compression: 'GZIP', destinations: [{ configId: localDest.id }] }, 201);
    const vault = await call('POST', '/api/vault', { name: 'config key', key: KEY_HEX }, 201);
    ids = { pg: pg.id, local: localDest.id, backups: backupDest.id, hook: hook.id, job: job.id, vault: vault.id };
    const on = { enabled: true, channels: null, notifyUser: 'none' };
    await call('PUT', '/api/settings', {
      'notifications.config': {
        globalChannels: [hook.id],
        events: { connection_offline: on, connection_online: on, system_error: on, config_backup: on, storage_alert: { ...on, enabled: false } },
      },
    });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    await dropDatabase(source);
    for (const folder of folders) await rm(folder, { recursive: true, force: true });
  });

  it('bad input is refused with 4xx: unknown task, bad settings, bad paging, unknown adapter', async () => {
    expect((await server.call('POST', '/api/settings/system-tasks/NO_SUCH_TASK/run', admin)).status).toBe(404);
    const bad = await server.call('PUT', '/api/settings/observability', admin, { health: { degradedAfter: 3, offlineAfter: 2, logRetentionDays: 30 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('offlineAfter');
    expect((await server.call('PUT', '/api/settings/observability', admin, { unknown: true })).status).toBe(400);
    expect((await server.call('PUT', '/api/settings/observability', admin, { configBackup: { enabled: true, storageId: null, encryptionProfileId: null, schedule: '0 2 * * *', keep: 3, prefix: 'x' } })).status).toBe(400);
    expect((await server.call('PUT', '/api/settings/observability', admin, { metrics: { bearerToken: 'short' } })).status).toBe(400);
    expect((await server.call('GET', '/api/settings/system-tasks/runs?pageSize=0', admin)).status).toBe(400);
    expect((await server.call('GET', '/api/adapters/no-such-id/health', admin)).status).toBe(404);
    expect((await server.call('GET', `/api/adapters/${ids.hook}/health`, admin)).status).toBe(404);
    expect((await server.call('GET', `/api/adapters/${ids.local}/storage-usage?from=yesterday`, admin)).status).toBe(400);
  });

  it('a destination whose folder disappears goes DEGRADED then OFFLINE (event), and ONLINE again when it returns (event)', async () => {
    await call('PUT', '/api/settings/observability', { health: { degradedAfter: 1, offlineAfter: 2, logRetentionDays: 30 } });
    const first = await runTask('HEALTH_CHECK');
    expect(first).toMatchObject({ status: 'Success', message: 'checked 3: 3 online, 0 degraded, 0 offline' });
    // No connection test ran on the source before: its first version row comes from the health check.
    const versions = await call('GET', `/api/adapters/${ids.pg}/versions`);
    expect(versions.total).toBe(1);
    expect(versions.entries[0]).toMatchObject({ previousVersion: null });
    expect(versions.entries[0].newVersion).toMatch(/^\d+/);
    const local = folders[0]!;
    await rename(local, `${local}.away`);
    expect((await runTask('HEALTH_CHECK')).message).toBe('checked 3: 2 online, 1 degraded, 0 offline');
    expect((await call('GET', `/api/adapters/${ids.local}`)).lastStatus).toBe('DEGRADED');
    expect(hooksOf('connection_offline')).toHaveLength(0);
    expect((await runTask('HEALTH_CHECK')).message).toBe('checked 3: 2 online, 0 degraded, 1 offline');
    const offline = await call('GET', `/api/adapters/${ids.local}`);
    expect(offline).toMatchObject({ lastStatus: 'OFFLINE', consecutiveFailures: 2 });
    // A connection test is recorded in the same state (observability's adapter_health, through TOKENS.AdapterHealth),
    // and the catalog's list answers it too.
    expect((await call('POST', '/api/adapters/test-connection', { id: ids.local })).success).toBe(false);
    const tested = (await call('GET', '/api/adapters?type=storage')).find((adapter: { id: string }) => adapter.id === ids.local);
    expect(tested).toMatchObject({ lastStatus: 'OFFLINE', consecutiveFailures: 3 });
    expect(tested.lastError).toEqual(expect.any(String));
    expect(Date.parse(tested.lastHealthCheck)).toBeGreaterThanOrEqual(Date.parse(offline.lastHealthCheck));
    const offlineHook = await until('connection_offline hook', async () => hooksOf('connection_offline')[0]);
    expect(offlineHook.title).toBe('Offline: local');
    // Still offline: no second event.
    await runTask('HEALTH_CHECK');
    await rename(`${local}.away`, local);
    await runTask('HEALTH_CHECK');
    expect((await call('GET', `/api/adapters/${ids.local}`)).lastStatus).toBe('ONLINE');
    const onlineHook = await until('connection_online hook', async () => hooksOf('connection_online')[0]);
    expect(onlineHook.title).toBe('Back online: local');
    expect(hooksOf('connection_offline')).toHaveLength(1);

    const history = await call('GET', `/api/adapters/${ids.local}/health?pageSize=10`);
    expect(history.total).toBe(5);
    expect(history.entries.map((entry: { status: string }) => entry.status)).toEqual(['ONLINE', 'OFFLINE', 'OFFLINE', 'DEGRADED', 'ONLINE']);
    expect(history.entries[1].error).toBeTruthy();
    for (const entry of history.entries) expect(Number.isInteger(entry.latencyMs) && entry.latencyMs >= 0).toBe(true);
    const paged = await call('GET', `/api/adapters/${ids.local}/health?page=2&pageSize=2`);
    expect(paged.entries.map((entry: { status: string }) => entry.status)).toEqual(['OFFLINE', 'DEGRADED']);

    const log = await until('log entries', async () => {
      const page = await call('GET', `/api/notifications/log?channelId=${ids.hook}&pageSize=50`);
      const events = page.entries.map((entry: { eventType: string }) => entry.eventType);
      return events.includes('connection_online') && events.includes('connection_offline') ? page.entries : undefined;
    });
    expect(log.filter((entry: { eventType: string; status: string }) => entry.eventType.startsWith('connection_') && entry.status === 'Success')).toHaveLength(2);
  }, 120_000);

  it('an sftp destination whose server stops (a TCP relay to the test sshd, closed) goes DEGRADED, OFFLINE, then ONLINE when it is back', async () => {
    const sshd = JSON.parse(await readFile('/tmp/holdfast-test-services/sshd/sshd.json', 'utf8')) as { host: string; port: number; user: string; password: string; home: string };
    const sockets = new Set<Socket>();
    const relay = createNetServer((client) => {
      const upstream = connect(sshd.port, sshd.host);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    const listen = (port = 0) => new Promise<number>((resolve) => relay.listen(port, '127.0.0.1', () => resolve((relay.address() as AddressInfo).port)));
    const stop = async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    };
    const port = await listen();
    try {
      const remote = await call('POST', '/api/adapters', { name: 'remote sftp', type: 'storage', adapterId: 'sftp', config: { host: '127.0.0.1', port, username: sshd.user, password: sshd.password, root: sshd.home } }, 201);
      const statusOf = async () => (await call('GET', `/api/adapters/${remote.id}`)).lastStatus as string;
      const offlineBefore = hooksOf('connection_offline').length;
      const onlineBefore = hooksOf('connection_online').length;
      await runTask('HEALTH_CHECK');
      expect(await statusOf()).toBe('ONLINE');
      await stop();
      await runTask('HEALTH_CHECK');
      expect(await statusOf()).toBe('DEGRADED');
      await runTask('HEALTH_CHECK');
      expect(await statusOf()).toBe('OFFLINE');
      const offline = await until('sftp offline hook', async () => hooksOf('connection_offline').slice(offlineBefore)[0]);
      expect(offline.title).toBe('Offline: remote sftp');
      await listen(port);
      await runTask('HEALTH_CHECK');
      expect(await statusOf()).toBe('ONLINE');
      const online = await until('sftp online hook', async () => hooksOf('connection_online').slice(onlineBefore)[0]);
      expect(online.title).toBe('Back online: remote sftp');
      const history = await call('GET', `/api/adapters/${remote.id}/health`);
      expect(history.entries.map((entry: { status: string }) => entry.status)).toEqual(['ONLINE', 'OFFLINE', 'DEGRADED', 'ONLINE']);
      await call('DELETE', `/api/adapters/${remote.id}`);
    } finally {
      if (relay.listening) await stop();
    }
  }, 120_000);

  it('CLEAN_OLD_LOGS prunes health rows past the retention; UPDATE_DB_VERSIONS records the source version', async () => {
    const versions = await runTask('UPDATE_DB_VERSIONS');
    expect(versions).toMatchObject({ status: 'Success', message: 'recorded the version of 1 source(s)' });
    const history = await call('GET', `/api/adapters/${ids.pg}/versions`);
    expect(history.total).toBe(1);
    expect(history.entries[0].newVersion).toMatch(/^\d+/);
    const clean = await runTask('CLEAN_OLD_LOGS');
    expect(clean).toMatchObject({ status: 'Success' });
    expect(clean.message).toMatch(/^removed 0 health check row\(s\)/);
  }, 60_000);

  it('a failing task is recorded Failed and raises system_error and config_backup (failure) to the channel', async () => {
    // A notification channel is not a storage destination: the backup fails for a real reason.
    await call('PUT', '/api/settings/observability', { configBackup: { enabled: false, storageId: ids.hook, encryptionProfileId: null, schedule: '0 2 * * *', keep: 2, prefix: 'holdfast-config' } });
    const run = await runTask('CONFIG_BACKUP');
    expect(run.status).toBe('Failed');
    expect(run.message).toBe(`configuration ${ids.hook} is not a storage destination`);
    const error = await until('system_error hook', async () => hooksOf('system_error')[0]);
    expect(error.fields).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Source', value: 'system-task:CONFIG_BACKUP' })]));
    const failed = await until('config_backup hook', async () => hooksOf('config_backup')[0]);
    expect(failed.title).toBe('Configuration backup failed');
    const runs = await call('GET', '/api/settings/system-tasks/runs?status=Failed');
    expect(runs.runs.map((entry: { task: string }) => entry.task)).toContain('CONFIG_BACKUP');
    const logged = await until('log entries', async () => {
      const page = await call('GET', `/api/notifications/log?channelId=${ids.hook}&status=Success&pageSize=100`);
      const events = page.entries.map((entry: { eventType: string }) => entry.eventType);
      return events.includes('system_error') && events.includes('config_backup') ? page.entries : undefined;
    });
    expect(logged.find((entry: { eventType: string }) => entry.eventType === 'system_error').message).toBe('System task CONFIG_BACKUP failed');
  }, 60_000);

  it('config self-backup keeps the newest N files and raises config_backup; a fresh installation imports it and its stored secret works', async () => {
    const sshd = JSON.parse(await readFile('/tmp/holdfast-test-services/sshd/sshd.json', 'utf8')) as { host: string; port: number; user: string; password: string; home: string };
    const sftp = await call('POST', '/api/adapters', { name: 'offsite sftp', type: 'storage', adapterId: 'sftp', config: { host: sshd.host, port: sshd.port, username: sshd.user, password: sshd.password, root: sshd.home } }, 201);
    expect((await call('POST', '/api/adapters/test-connection', { id: sftp.id })).success).toBe(true);
    await call('PUT', '/api/settings/observability', { configBackup: { enabled: true, storageId: ids.backups, encryptionProfileId: ids.vault, schedule: '0 2 * * *', keep: 2, prefix: 'holdfast-config' } });
    const before = hooksOf('config_backup').length;
    for (let index = 0; index < 3; index++) expect((await runTask('CONFIG_BACKUP')).status).toBe('Success');
    const files = (await readdir(join(folders[1]!, 'holdfast-config'))).filter((name) => name.endsWith('.json')).sort();
    expect(files).toHaveLength(2);
    await until('config_backup success hooks', async () => (hooksOf('config_backup').length >= before + 3 ? true : undefined));
    const success = hooksOf('config_backup').at(-1)!;
    expect(success.title).toBe('Configuration backup completed');
    expect(success.fields).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'File', value: `holdfast-config/${files[1]}` })]));

    const document = JSON.parse(await readFile(join(folders[1]!, 'holdfast-config', files[1]!), 'utf8'));
    const fresh = await startFullServer(dialect);
    try {
      const freshAdmin = await fresh.signIn(ADMIN.email, ADMIN.password);
      const imported = await fresh.call('POST', '/api/config/import', freshAdmin, { document, key: KEY_HEX });
      expect(imported.status, JSON.stringify(imported.body)).toBe(200);
      const names = async (target: FullServer, caller: Caller, path: string) => {
        const answer = await target.call('GET', path, caller);
        expect(answer.status, path).toBe(200);
        const list = (Array.isArray(answer.body) ? answer.body : (answer.body.data ?? answer.body.items ?? answer.body.entries)) as Array<{ name: string }>;
        return list.map((entry) => entry.name).sort();
      };
      for (const path of ['/api/adapters', '/api/jobs', '/api/credentials', '/api/vault', '/api/naming-templates', '/api/retention-policies', '/api/schedule-presets', '/api/notification-templates']) {
        expect(await names(fresh, freshAdmin, path), path).toEqual(await names(server, admin, path));
      }
      const copies = (await fresh.call('GET', '/api/adapters', freshAdmin)).body as Array<{ id: string; name: string }>;
      const copy = (Array.isArray(copies) ? copies : (copies as any).data).find((entry: { name: string }) => entry.name === 'offsite sftp');
      const tested = await fresh.call('POST', '/api/adapters/test-connection', freshAdmin, { id: copy.id });
      expect(tested.body, JSON.stringify(tested.body)).toMatchObject({ success: true });
    } finally {
      await fresh.close();
    }
  }, 120_000);

  // The cron path once (it waits for a minute boundary): the scheduled run is recorded with trigger Scheduler.
  if (dialect === 'postgresql') {
    it('an enabled task fires on its cron in the system time zone and is recorded as a Scheduler run', async () => {
      await call('POST', '/api/settings/system-tasks', { task: 'CLEAN_OLD_LOGS', schedule: '* * * * *', enabled: true });
      try {
        const run = await until(
          'scheduled run',
          async () => (await call('GET', '/api/settings/system-tasks/runs?task=CLEAN_OLD_LOGS&pageSize=20')).runs.find((entry: { trigger: string; status: string }) => entry.trigger === 'Scheduler' && entry.status !== 'Running'),
          100_000,
        );
        expect(run.status).toBe('Success');
        const task = (await call('GET', '/api/settings/system-tasks')).find((entry: { task: string }) => entry.task === 'CLEAN_OLD_LOGS');
        expect(new Date(task.lastRunAt).getTime()).toBeGreaterThanOrEqual(new Date(run.startedAt).getTime() - 1000);
        expect(new Date(task.nextRunAt).getTime()).toBeGreaterThan(new Date(run.startedAt).getTime());
      } finally {
        await call('POST', '/api/settings/system-tasks', { task: 'CLEAN_OLD_LOGS', schedule: '30 3 * * *' });
      }
    }, 120_000);
  }

  it('/metrics parses as Prometheus text; counters move with real runs; last success equals the execution end; bearer token protects it', async () => {
    let text = '';
    const scrape = async () => {
      const answer = await fetch(`${server.url}/metrics`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toContain('text/plain');
      text = await answer.text();
      // The parser throws on any line that is not valid text format.
      return parsePrometheusTextFormat(text);
    };
    // The parser folds labelled histograms into one entry, so their _count series are read from the checked text.
    const histogramCount = (name: string, labels: Record<string, string>) => {
      const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}_count{`) && Object.entries(labels).every(([key, value]) => candidate.includes(`${key}="${value}"`)));
      return line ? Number(line.split(' ').at(-1)) : NaN;
    };
    const sample = (families: ReturnType<typeof parsePrometheusTextFormat>, name: string, labels: Record<string, string> = {}) =>
      families.find((family) => family.name === name)?.metrics.find((metric) => Object.entries(labels).every(([key, value]) => metric.labels?.[key] === value));
    const before = await scrape();
    const runsBefore = Number(sample(before, 'holdfast_backup_runs_total', { job: 'orders', status: 'Success' })?.value ?? 0);
    const first = await backup();
    const second = await backup();
    expect([first.status, second.status]).toEqual(['Success', 'Success']);
    const after = await until('counter', async () => {
      const families = await scrape();
      return Number(sample(families, 'holdfast_backup_runs_total', { job: 'orders', status: 'Success' })?.value) === runsBefore + 2 ? families : undefined;
    });
    const bytes = Number(sample(after, 'holdfast_backup_bytes_written_total', { job: 'orders' })?.value);
    expect(bytes).toBe(Number(first.size) + Number(second.size));
    expect(after.find((family) => family.name === 'holdfast_backup_run_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(histogramCount('holdfast_backup_run_duration_seconds', { job: 'orders', status: 'Success' })).toBe(2);
    const lastSuccess = Number(sample(after, 'holdfast_job_last_success_timestamp_seconds', { job_id: ids.job })?.value);
    expect(lastSuccess * 1000).toBeCloseTo(new Date(second.endedAt).getTime(), 0);
    expect(Number(sample(after, 'holdfast_queue_depth')?.value)).toBe(0);
    expect(Number(sample(after, 'holdfast_running_executions')?.value)).toBe(0);
    expect(sample(after, 'holdfast_adapter_health', { config_id: ids.local, status: 'ONLINE' })?.value).toBe('1');
    expect(sample(after, 'holdfast_adapter_health', { config_id: ids.local, status: 'OFFLINE' })?.value).toBe('0');
    expect(histogramCount('holdfast_http_request_duration_seconds', { method: 'POST', route: '/api/jobs/:id/run', status: '200' })).toBeGreaterThanOrEqual(2);
    expect(histogramCount('holdfast_http_request_duration_seconds', { method: 'GET', route: '/api/adapters/:id', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(after.find((family) => family.name === 'holdfast_notification_failures')).toBeDefined();
    // Every metric the Grafana dashboard queries exists.
    const dashboard = await readFile(new URL('../../../docs/operations/grafana-dashboard.json', import.meta.url), 'utf8');
    const queried = new Set([...dashboard.matchAll(/holdfast_[a-z_]+/g)].map((match) => match[0].replace(/_(bucket|count|sum)$/, '')));
    expect(queried.size).toBeGreaterThan(5);
    for (const name of queried) expect(after.map((family) => family.name), name).toContain(name);

    await call('PUT', '/api/settings/observability', { metrics: { bearerToken: 'scrape-token-0123456789' } });
    expect((await call('GET', '/api/settings/observability')).metrics).toEqual({ bearerTokenSet: true });
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer scrape-token-0123456789' } })).status).toBe(200);
    await call('PUT', '/api/settings/observability', { metrics: { bearerToken: null } });
  }, 120_000);

  it('storage snapshots after a backup feed usage over time; a size-limit alert is raised but its disabled event sends nothing; REFRESH_STORAGE_STATS runs', async () => {
    const events = server.handle.container.resolve(TOKENS.EventBus);
    const alerts: Array<{ alert: string; configId: string }> = [];
    const off = events.on('storage_alert', (alert) => void alerts.push(alert));
    try {
      await call('PUT', '/api/settings/observability', { storageAlerts: { usageSpikePercent: null, sizeLimits: { [ids.local]: 1 }, noBackupHours: null } });
      expect((await runTask('REFRESH_STORAGE_STATS')).status).toBe('Success');
      await until('size alert', async () => (alerts.some((alert) => alert.alert === 'size_limit' && alert.configId === ids.local) ? true : undefined));
      // Same episode on the next refresh: not raised again.
      await runTask('REFRESH_STORAGE_STATS');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(alerts.filter((alert) => alert.alert === 'size_limit')).toHaveLength(1);
      expect(hooksOf('storage_alert')).toHaveLength(0);
      const usage = await call('GET', `/api/adapters/${ids.local}/storage-usage`);
      expect(usage.snapshots.length).toBeGreaterThanOrEqual(2);
      expect(usage.snapshots.at(-1).count).toBe(2);
      expect(usage.snapshots.at(-1).size).toBeGreaterThan(0);
      const dashboard = await call('GET', '/api/dashboard/stats');
      expect(JSON.stringify(dashboard)).toContain('totalStorageBytes');
    } finally {
      off();
    }
  }, 60_000);
});
