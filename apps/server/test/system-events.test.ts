// Issue 14 acceptance 3 on the assembled server: every system event of the issue is raised by its real cause and
// reaches a generic-webhook channel configured for it, with a notification log entry; while the events are disabled
// the very same causes send nothing and log nothing. Causes: a user created over the API (user_created), that user
// signing in (user_login), a restore run that succeeds (restore_complete) and one whose file does not exist
// (restore_failure), an engine version that changes between two connection tests (db_version_changed; the first
// detection notifies nothing, the change back is a Downgrade in amber), a backup file with one flipped byte found by
// an integrity check (integrity_check_failed), and a configuration backup aimed at a notification channel instead of
// a storage, which fails the system task (config_backup, failure, and system_error).
//
// The changed engine version comes from a LABELLED FAKE: a `sqlite3` wrapper in a temp binDirectory that answers
// `-version` as SQLite 3.99.0 and runs the real CLI for everything else (only one SQLite build is installed here).
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpReceiver, type HttpReceiver } from '@holdfast/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';
import { databaseName, dropDatabase, seedDatabase } from './support/postgres-data.js';

const EVENTS = ['user_created', 'user_login', 'restore_complete', 'restore_failure', 'db_version_changed', 'integrity_check_failed', 'config_backup', 'system_error'] as const;
type EventType = (typeof EVENTS)[number];

interface Hook {
  eventType: string;
  title: string;
  message: string;
  color: string;
  success: boolean | null;
  fields: Array<{ name: string; value: string }>;
}

describe('system events from their real causes on the assembled server (sqlite)', () => {
  const source = databaseName('sysevents');
  const restored: string[] = [];
  const folders: string[] = [];
  let server: FullServer;
  let admin: Caller;
  let receiver: HttpReceiver;
  let realBin: string;
  let fakeBin: string;
  let sqliteFile: string;
  const ids: Record<string, string> = {};

  const call = async (method: string, path: string, body?: unknown, status = 200) => {
    const answer = await server.call(method, path, admin, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(status);
    return answer.body;
  };
  const hooks = (): Hook[] => receiver.requests.map((request) => JSON.parse(request.body.toString('utf8')) as Hook);
  const hooksOf = (eventType: EventType) => hooks().filter((hook) => hook.eventType === eventType);
  const logOf = async (eventType: EventType) => (await call('GET', `/api/notifications/log?eventType=${eventType}&pageSize=50`)).entries as any[];

  async function settled(executionId: string): Promise<any> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const answer = await call('GET', `/api/executions/${executionId}?includeLogs=true`);
      if (!['Pending', 'Running'].includes(answer.data.status)) return answer.data;
      if (Date.now() > deadline) throw new Error(`execution ${executionId} still ${answer.data.status}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }

  async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }

  async function configureEvents(enabled: boolean): Promise<void> {
    const events = Object.fromEntries(EVENTS.map((event) => [event, { enabled, channels: null, notifyUser: 'none' }]));
    await call('PUT', '/api/settings', { 'notifications.config': { globalChannels: [ids.hook], events } });
  }

  /** Points the SQLite source at a binDirectory and runs a connection test, which records the detected version. */
  async function testConnectionWith(sourceId: string, binDirectory: string, version: string): Promise<void> {
    await call('PUT', `/api/adapters/${sourceId}`, { config: { path: sqliteFile, binDirectory } });
    expect(await call('POST', '/api/adapters/test-connection', { id: sourceId })).toMatchObject({ success: true, version });
  }

  /** Every cause once. `tag` keeps names apart between the two passes. */
  async function raiseEveryCause(tag: string): Promise<{ user: string; restore: any; failedRestore: any; integrity: any; versionSource: string }> {
    const user = `Event User ${tag}`;
    const email = `event-user-${tag}@example.test`;
    const password = 'a long enough password for the test';
    await call('POST', '/api/users', { name: user, email, password }, 201);
    await server.signIn(email, password);

    const target = databaseName(`sysev_${tag}`);
    restored.push(target);
    const restore = await settled((await call('POST', `/api/storage/${ids.local}/restore`, { file: ids.file, database: target, targetSourceId: ids.pg })).executionId);
    expect(restore.status, JSON.stringify(restore.logs?.slice(-3))).toBe('Success');
    const failedRestore = await settled((await call('POST', `/api/storage/${ids.local}/restore`, { file: `missing-${tag}.dump.gz`, database: `${target}_never`, targetSourceId: ids.pg })).executionId);
    expect(failedRestore.status).toBe('Failed');

    const versionSource = (await call('POST', '/api/adapters', { name: `sqlite ${tag}`, type: 'database', adapterId: 'sqlite', config: { path: sqliteFile, binDirectory: realBin } }, 201)).id as string;
    const installed = execFileSync('sqlite3', ['-version'], { encoding: 'utf8' }).split(' ')[0]!;
    await testConnectionWith(versionSource, realBin, installed); // first observation: a row, never an event
    await testConnectionWith(versionSource, fakeBin, '3.99.0'); // upgrade
    await testConnectionWith(versionSource, realBin, installed); // downgrade

    // One flipped byte in the middle of the backup, found by an integrity check of its job; flipped back after.
    const path = join(folders[0]!, ids.file!);
    const data = await readFile(path);
    const at = Math.floor(data.length / 2);
    data[at] = data[at]! ^ 0x01;
    await writeFile(path, data);
    const integrity = await settled((await call('POST', '/api/integrity-checks', { jobId: ids.job })).executionId);
    expect(integrity).toMatchObject({ type: 'IntegrityCheck', status: 'Partial' });
    data[at] = data[at]! ^ 0x01;
    await writeFile(path, data);

    // A notification channel is no storage: the configuration backup task fails for a real reason.
    await call('PUT', '/api/settings/observability', { configBackup: { enabled: false, storageId: ids.hook, encryptionProfileId: null, schedule: '0 2 * * *', keep: 2, prefix: 'holdfast-config' } });
    const started = await call('POST', '/api/settings/system-tasks/CONFIG_BACKUP/run', undefined, 202);
    const task = await until('CONFIG_BACKUP run', async () => {
      const page = await call('GET', '/api/settings/system-tasks/runs?task=CONFIG_BACKUP&pageSize=5');
      const run = page.runs.find((candidate: { id: string }) => candidate.id === started.id);
      return run && run.status !== 'Running' ? run : undefined;
    });
    expect(task.status).toBe('Failed');
    return { user, restore, failedRestore, integrity, versionSource };
  }

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    await seedDatabase(source, 200);
    const local = await mkdtemp(join(tmpdir(), 'holdfast-sysevents-local-'));
    realBin = await mkdtemp(join(tmpdir(), 'holdfast-sysevents-realbin-'));
    fakeBin = await mkdtemp(join(tmpdir(), 'holdfast-sysevents-fakebin-'));
    const sqliteDir = await mkdtemp(join(tmpdir(), 'holdfast-sysevents-sqlite-'));
    folders.push(local, realBin, fakeBin, sqliteDir);
    const sqlite3 = execFileSync('sh', ['-c', 'command -v sqlite3'], { encoding: 'utf8' }).trim();
    // The real CLI under its own directory, and the FAKE: same CLI, but `-version` answers a newer build.
    await writeFile(join(realBin, 'sqlite3'), `#!/bin/sh\nexec ${sqlite3} "$@"\n`);
    await writeFile(join(fakeBin, 'sqlite3'), `#!/bin/sh\n# FAKE sqlite3 (test only): a newer build for -version, the real CLI otherwise.\nfor arg in "$@"; do [ "$arg" = "-version" ] && { echo "3.99.0 2030-01-01 00:00:00 fake0build"; exit 0; }; done\nexec ${sqlite3} "$@"\n`);
    await chmod(join(realBin, 'sqlite3'), 0o755);
    await chmod(join(fakeBin, 'sqlite3'), 0o755);
    sqliteFile = join(sqliteDir, 'app.sqlite');
    execFileSync(sqlite3, [sqliteFile, 'CREATE TABLE t (id INTEGER PRIMARY KEY);']);

    ids.pg = (await call('POST', '/api/adapters', { name: 'orders db', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' } }, 201)).id;
    ids.local = (await call('POST', '/api/adapters', { name: 'local disk', type: 'storage', adapterId: 'local', config: { path: local } }, 201)).id;
    ids.hook = (await call('POST', '/api/adapters', { name: 'ops hook', type: 'notification', adapterId: 'generic-webhook', config: { webhookUrl: `${receiver.url}/hook` } }, 201)).id;
    ids.job = (await call('POST', '/api/jobs', { name: 'orders', schedule: '0 3 * * *', sourceId: ids.pg, databases: [source], compression: 'GZIP', destinations: [{ configId: ids.local }] }, 201)).id;
    const backup = await settled((await call('POST', `/api/jobs/${ids.job}/run`, {})).executionId);
    expect(backup.status, JSON.stringify(backup.logs?.slice(-3))).toBe('Success');
    ids.file = backup.path;
    // A backup records the version it detected: the source's first history row.
    expect((await call('GET', `/api/adapters/${ids.pg}/versions`)).entries).toMatchObject([{ previousVersion: null, newVersion: expect.stringMatching(/^\d+\.\d+/) }]);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    await dropDatabase(source);
    for (const name of restored) await dropDatabase(name);
    for (const folder of folders) await rm(folder, { recursive: true, force: true });
  });

  it('with every event disabled, the same causes send nothing and log nothing', async () => {
    await configureEvents(false);
    const caused = await raiseEveryCause('off');
    // The version change did happen (history rows), it just was not sent.
    expect((await call('GET', `/api/adapters/${caused.versionSource}/versions`)).total).toBe(3);
    // Sends run in the background after the cause: give a late one time to show up.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(hooks().filter((hook) => (EVENTS as readonly string[]).includes(hook.eventType))).toEqual([]);
    for (const event of EVENTS) expect(await logOf(event), event).toEqual([]);
  }, 180_000);

  it('with every event enabled, each cause reaches the channel once with a log entry; the first version detection sends nothing', async () => {
    await configureEvents(true);
    const caused = await raiseEveryCause('on');
    const expectedCounts: Record<EventType, number> = { user_created: 1, user_login: 1, restore_complete: 1, restore_failure: 1, db_version_changed: 2, integrity_check_failed: 1, config_backup: 1, system_error: 1 };
    await until('every hook', () => (EVENTS.every((event) => hooksOf(event).length >= expectedCounts[event]) ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const event of EVENTS) expect(hooksOf(event), event).toHaveLength(expectedCounts[event]);

    // One history row per detection that changed something: the first, the upgrade, the downgrade.
    const history = await call('GET', `/api/adapters/${caused.versionSource}/versions`);
    expect(history.entries.map((entry: { previousVersion: string | null; newVersion: string }) => entry.previousVersion)).toEqual([
      '3.99.0',
      history.entries[2].newVersion,
      null,
    ]);
    const fieldsOf = (hook: Hook) => Object.fromEntries(hook.fields.map((field) => [field.name, field.value]));
    expect(hooksOf('user_created')[0]).toMatchObject({ title: `New user: ${caused.user}` });
    expect(fieldsOf(hooksOf('user_created')[0]!)).toMatchObject({ User: caused.user, Email: 'event-user-on@example.test' });
    expect(hooksOf('user_login')[0]).toMatchObject({ title: `Sign-in: ${caused.user}` });
    expect(hooksOf('restore_complete')[0]).toMatchObject({ title: 'Restore completed', success: true });
    expect(fieldsOf(hooksOf('restore_complete')[0]!)).toMatchObject({ File: ids.file, Storage: ids.local, Target: ids.pg });
    expect(hooksOf('restore_failure')[0]).toMatchObject({ title: 'Restore failed', success: false });
    expect(fieldsOf(hooksOf('restore_failure')[0]!)).toMatchObject({ File: 'missing-on.dump.gz' });
    expect(fieldsOf(hooksOf('restore_failure')[0]!).Error).toBeTruthy();
    const [upgrade, downgrade] = hooksOf('db_version_changed');
    expect(upgrade).toMatchObject({ title: 'Database version upgrade: sqlite on', color: '#3b82f6' });
    expect(fieldsOf(upgrade!)).toMatchObject({ Change: 'Upgrade', New: '3.99.0' });
    expect(downgrade).toMatchObject({ title: 'Database version downgrade: sqlite on', color: '#f59e0b' });
    expect(fieldsOf(downgrade!)).toMatchObject({ Change: 'Downgrade', Previous: '3.99.0' });
    expect(hooksOf('integrity_check_failed')[0]).toMatchObject({ title: 'Integrity check found 1 problem', success: false });
    expect(fieldsOf(hooksOf('integrity_check_failed')[0]!).Files).toContain(ids.file);
    expect(hooksOf('config_backup')[0]).toMatchObject({ title: 'Configuration backup failed', success: false });
    expect(fieldsOf(hooksOf('system_error')[0]!)).toMatchObject({ Source: 'system-task:CONFIG_BACKUP' });

    for (const event of EVENTS) {
      const entries = await until(`log of ${event}`, async () => {
        const found = await logOf(event);
        return found.length >= expectedCounts[event] ? found : undefined;
      });
      expect(entries, event).toHaveLength(expectedCounts[event]);
      for (const entry of entries) expect(entry, event).toMatchObject({ eventType: event, channelId: ids.hook, channelName: 'ops hook', status: 'Success' });
    }
    // Run-bound events link their log entry to the run that raised them.
    expect((await logOf('restore_complete'))[0].executionId).toBe(caused.restore.id);
    expect((await logOf('restore_failure'))[0].executionId).toBe(caused.failedRestore.id);
    expect((await logOf('integrity_check_failed'))[0].executionId).toBe(caused.integrity.id);
  }, 180_000);
});
