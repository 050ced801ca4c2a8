// The system task schedules in observability's own system_task_schedules table (issue 40 item 1): the migration that
// takes them over from the catalog's system_tasks, so an existing data directory keeps its schedules, enabled flags
// and last runs; the defaults seeded beside them; changes checked and audited; and the TOKENS.SystemTaskSchedules
// port the catalog's export and import use (both dialects).
import { openDatabase, type HoldfastDatabase } from '@holdfast/database';
import { createTestSite, type TestSite } from '@holdfast/tooling/harness/test-site';
import { ValidationError, type AuditEntry, type HoldfastPlugin } from '@holdfast/kernel';
import { defineMigration } from '@holdfast/orm-port';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createAdapterHealthTable,
  createObservabilityPlugin,
  createObservabilityTables,
  HealthCheckLogEntity,
  ObservabilitySettingEntity,
  StorageAlertStateEntity,
  SystemTaskDefinitions,
  SystemTaskRunEntity,
} from '../src/index.js';

/** The catalog's system_tasks as its migration 20260102-catalog-001-schema made it. */
const legacyCatalog: HoldfastPlugin = {
  name: 'catalog',
  migrations: [
    defineMigration('20260102-catalog-001-schema', async (knex) => {
      await knex.schema.createTable('system_tasks', (t) => {
        t.string('task', 64).primary();
        t.boolean('enabled').notNullable().defaultTo(true);
        t.string('schedule', 255).notNullable();
        t.datetime('last_run_at', { useTz: true }).nullable();
        t.datetime('next_run_at', { useTz: true }).nullable();
        t.datetime('updated_at', { useTz: true }).notNullable();
      });
    }),
  ],
};

/** Observability as it was before: its first two migrations. */
const previousObservability: HoldfastPlugin = {
  name: 'observability',
  entities: [SystemTaskRunEntity, HealthCheckLogEntity, ObservabilitySettingEntity, StorageAlertStateEntity],
  migrations: [createObservabilityTables, createAdapterHealthTable],
};

const silent = { debug() {}, info() {}, warn() {}, error() {} } as never;

describe.each(['sqlite', 'postgresql'] as const)('system task schedules on %s', (dialect) => {
  let site: TestSite | undefined;
  const handles: HoldfastDatabase[] = [];
  const open = async (plugins: HoldfastPlugin[]) => {
    const db = await openDatabase({ dataDir: site!.dataDir, databaseUrl: site!.databaseUrl, plugins });
    handles.push(db);
    await db.migrate();
    return db;
  };
  const definitions = (db: HoldfastDatabase, audits: AuditEntry[] = []) =>
    new SystemTaskDefinitions({ database: () => db, settings: () => ({ get: async <T>() => 'Europe/Berlin' as T }), audit: () => ({ write: async (entry) => void audits.push(entry) }), logger: silent });
  afterEach(async () => {
    for (const db of handles.splice(0)) await db.close();
    await site?.remove();
    site = undefined;
  });

  it('a database made before system_task_schedules keeps the schedules, flags and runs it had in system_tasks once migrated', async () => {
    site = await createTestSite(dialect, 'task-schedules');
    const before = await open([legacyCatalog, previousObservability]);
    const platform = before.em().getPlatform();
    const date = (value: Date | null) => (value ? platform.processDateProperty(value) : null);
    const lastRun = new Date('2026-11-30T08:15:00.250Z');
    const nextRun = new Date('2026-11-30T08:30:00.000Z');
    const rows = [
      { task: 'HEALTH_CHECK', enabled: true, schedule: '*/5 * * * *', last_run_at: lastRun, next_run_at: nextRun },
      { task: 'CLEAN_OLD_LOGS', enabled: false, schedule: '15 2 * * *', last_run_at: null, next_run_at: null },
      { task: 'UPDATE_DB_VERSIONS', enabled: true, schedule: '0 4 * * *', last_run_at: lastRun, next_run_at: null },
    ];
    for (const row of rows) {
      await before.em().getKnex()('system_tasks').insert({ ...row, last_run_at: date(row.last_run_at), next_run_at: date(row.next_run_at), updated_at: date(lastRun) });
    }
    await before.close();
    handles.splice(0);

    const after = await open([legacyCatalog, createObservabilityPlugin({ processMetrics: false })]);
    const tasks = definitions(after);
    expect(await tasks.list()).toEqual([
      { task: 'CLEAN_OLD_LOGS', enabled: false, schedule: '15 2 * * *', lastRunAt: null },
      { task: 'HEALTH_CHECK', enabled: true, schedule: '*/5 * * * *', lastRunAt: lastRun.toISOString() },
      { task: 'UPDATE_DB_VERSIONS', enabled: true, schedule: '0 4 * * *', lastRunAt: lastRun.toISOString() },
    ]);
    expect((await tasks.views()).find((view) => view.task === 'HEALTH_CHECK')?.nextRunAt).toBe(nextRun.toISOString());
    // Seeding at start keeps what was taken over and adds the task the old database had no row for.
    await tasks.seed();
    const seeded = await tasks.views();
    expect(seeded.map((view) => [view.task, view.schedule, view.enabled])).toEqual([
      ['CLEAN_OLD_LOGS', '15 2 * * *', false],
      ['HEALTH_CHECK', '*/5 * * * *', true],
      ['REFRESH_STORAGE_STATS', '0 * * * *', true],
      ['UPDATE_DB_VERSIONS', '0 4 * * *', true],
    ]);
    // The old table is left as it was (unused; a later catalog migration drops it).
    expect((await after.em().getKnex()('system_tasks').select('task')).map((row: { task: string }) => row.task).sort()).toEqual(['CLEAN_OLD_LOGS', 'HEALTH_CHECK', 'UPDATE_DB_VERSIONS']);
  });

  it('without the catalog\'s table the defaults are seeded; changes are checked, audited, and restored through the port', async () => {
    site = await createTestSite(dialect, 'task-schedules');
    const db = await open([createObservabilityPlugin({ processMetrics: false })]);
    const audits: AuditEntry[] = [];
    const tasks = definitions(db, audits);
    expect(await tasks.list()).toEqual([]);
    await tasks.seed();
    await tasks.seed();
    const defaults = await tasks.views();
    expect(defaults.map((view) => [view.task, view.schedule, view.enabled])).toEqual([
      ['CLEAN_OLD_LOGS', '30 3 * * *', true],
      ['HEALTH_CHECK', '*/15 * * * *', true],
      ['REFRESH_STORAGE_STATS', '0 * * * *', true],
      ['UPDATE_DB_VERSIONS', '0 4 * * *', true],
    ]);
    expect(defaults.every((view) => view.lastRunAt === null && view.nextRunAt !== null)).toBe(true);

    await expect(tasks.update([{ task: 'HEALTH_CHECK', schedule: '*/5 * * * *' }, { task: 'CLEAN_OLD_LOGS', schedule: 'every minute' }], { userId: 'u1' })).rejects.toThrow(
      /body\.tasks\[1\]\.schedule: must have 5/,
    );
    await expect(tasks.update([{ task: 'HEALTH_CHECK', schedule: '61 * * * *' }], { userId: 'u1' })).rejects.toBeInstanceOf(ValidationError);
    expect((await tasks.views()).find((view) => view.task === 'HEALTH_CHECK')?.schedule).toBe('*/15 * * * *');
    expect(audits).toEqual([]);

    const changed = await tasks.update([{ task: 'HEALTH_CHECK', schedule: ' 0   9 * * 1 ', enabled: false }], { userId: 'u1', ipAddress: '10.0.0.1' });
    expect(changed.find((view) => view.task === 'HEALTH_CHECK')).toMatchObject({ enabled: false, schedule: '0 9 * * 1', nextRunAt: null });
    expect(audits).toEqual([{ userId: 'u1', action: 'UPDATE', resource: 'system-task', resourceId: null, details: { tasks: ['HEALTH_CHECK'] }, ipAddress: '10.0.0.1', userAgent: null }]);

    const applied = await tasks.restore([
      { task: 'HEALTH_CHECK', enabled: true, schedule: '30 1 * * *' },
      { task: 'CLEAN_OLD_LOGS', enabled: false, schedule: 'not a cron' },
      { task: 'CONFIG_BACKUP', enabled: true, schedule: '0 2 * * *' },
    ]);
    expect(applied).toEqual(['HEALTH_CHECK']);
    const restored = await tasks.views();
    // 01:30 in Berlin is 00:30 (winter) or 23:30 (summer) UTC.
    expect(restored.find((view) => view.task === 'HEALTH_CHECK')).toMatchObject({ enabled: true, schedule: '30 1 * * *', nextRunAt: expect.stringMatching(/T(00|23):30:00\.000Z$/) });
    expect(restored.find((view) => view.task === 'CLEAN_OLD_LOGS')).toMatchObject({ enabled: true, schedule: '30 3 * * *' });
  });
});
