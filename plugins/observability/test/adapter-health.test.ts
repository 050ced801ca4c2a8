// The health state of adapter configurations in observability's own adapter_health table (issue 40 item 1): the
// TOKENS.AdapterHealth port the catalog reads and records connection tests through, and the migration that takes
// the state over from the four columns it had on the catalog's adapter_configs, so an existing data directory keeps
// its health (both dialects).
import { openDatabase, type HoldfastDatabase } from '@holdfast/database';
import { createTestSite, type TestSite } from '@holdfast/tooling/harness/test-site';
import type { HoldfastPlugin } from '@holdfast/kernel';
import type { Knex } from '@mikro-orm/knex';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AdapterHealthStore,
  createObservabilityPlugin,
  createObservabilityTables,
  HealthCheckLogEntity,
  ObservabilitySettingEntity,
  StorageAlertStateEntity,
  SystemTaskRunEntity,
} from '../src/index.js';

/** The catalog's adapter_configs as its migration 20260102-catalog-001-schema made it, health columns included. */
const legacyCatalog: HoldfastPlugin = {
  name: 'catalog',
  migrations: [
    {
      name: '20260102-catalog-001-schema',
      async up(builder) {
        await (builder as Knex).schema.createTable('adapter_configs', (t) => {
          t.string('id', 36).primary();
          t.string('name', 255).notNullable();
          t.string('type', 32).notNullable();
          t.string('adapter_id', 255).notNullable();
          t.text('config').notNullable();
          t.datetime('last_health_check', { useTz: true }).nullable();
          t.string('last_status', 16).notNullable().defaultTo('ONLINE');
          t.text('last_error').nullable();
          t.integer('consecutive_failures').notNullable().defaultTo(0);
        });
      },
    },
  ],
};

/** Observability as it was before: its first migration only. */
const previousObservability: HoldfastPlugin = {
  name: 'observability',
  entities: [SystemTaskRunEntity, HealthCheckLogEntity, ObservabilitySettingEntity, StorageAlertStateEntity],
  migrations: [createObservabilityTables],
};

describe.each(['sqlite', 'postgresql'] as const)('adapter health on %s', (dialect) => {
  let site: TestSite | undefined;
  const handles: HoldfastDatabase[] = [];
  const open = async (plugins: HoldfastPlugin[]) => {
    const db = await openDatabase({ dataDir: site!.dataDir, databaseUrl: site!.databaseUrl, plugins });
    handles.push(db);
    await db.migrate();
    return db;
  };
  afterEach(async () => {
    for (const db of handles.splice(0)) await db.close();
    await site?.remove();
    site = undefined;
  });

  it('a database made before adapter_health keeps the state it had on adapter_configs once migrated', async () => {
    site = await createTestSite(dialect, 'adapter-health');
    const before = await open([legacyCatalog, previousObservability]);
    const platform = before.em().getPlatform();
    const checkedAt = new Date('2026-11-30T08:15:00.250Z');
    const rows = [
      { id: 'offline', name: 'Offline', type: 'storage', last_health_check: checkedAt, last_status: 'OFFLINE', last_error: 'connection refused', consecutive_failures: 4 },
      { id: 'degraded', name: 'Degraded', type: 'database', last_health_check: checkedAt, last_status: 'DEGRADED', last_error: 'timed out', consecutive_failures: 1 },
      { id: 'online', name: 'Online', type: 'database', last_health_check: checkedAt, last_status: 'ONLINE', last_error: null, consecutive_failures: 0 },
      { id: 'never', name: 'Never', type: 'notification', last_health_check: null, last_status: 'ONLINE', last_error: null, consecutive_failures: 0 },
    ];
    for (const row of rows) {
      await before.em().getKnex()('adapter_configs').insert({ ...row, adapter_id: 'x', config: '{}', last_health_check: row.last_health_check ? platform.processDateProperty(row.last_health_check) : null });
    }
    await before.close();
    handles.splice(0);

    const after = await open([legacyCatalog, createObservabilityPlugin({ processMetrics: false })]);
    const store = new AdapterHealthStore(() => after);
    const states = await store.statesOf(['offline', 'degraded', 'online', 'never', 'unknown']);
    expect(Object.fromEntries(states)).toEqual({
      offline: { lastHealthCheck: checkedAt, lastStatus: 'OFFLINE', lastError: 'connection refused', consecutiveFailures: 4 },
      degraded: { lastHealthCheck: checkedAt, lastStatus: 'DEGRADED', lastError: 'timed out', consecutiveFailures: 1 },
      online: { lastHealthCheck: checkedAt, lastStatus: 'ONLINE', lastError: null, consecutiveFailures: 0 },
    });
    // The old columns are left as they were (unused; a later catalog migration drops them).
    expect((await after.em().getKnex()('adapter_configs').where({ id: 'offline' }).first()).last_status).toBe('OFFLINE');
  });

  it('without the catalog\'s table there is nothing to take over; connection tests and checks are recorded and read back', async () => {
    site = await createTestSite(dialect, 'adapter-health');
    const db = await open([createObservabilityPlugin({ processMetrics: false })]);
    const store = new AdapterHealthStore(() => db);
    expect(await store.statesOf([])).toEqual(new Map());
    expect(await store.statesOf(['a'])).toEqual(new Map());

    await store.recordConnectionTest('a', false, 'x'.repeat(2500));
    await store.recordConnectionTest('a', false, 'still down');
    const failed = (await store.statesOf(['a'])).get('a')!;
    expect(failed).toMatchObject({ lastStatus: 'OFFLINE', lastError: 'still down', consecutiveFailures: 2 });
    expect(Date.now() - failed.lastHealthCheck!.getTime()).toBeLessThan(60_000);
    await store.recordConnectionTest('a', true, 'ok');
    expect((await store.statesOf(['a'])).get('a')).toMatchObject({ lastStatus: 'ONLINE', lastError: null, consecutiveFailures: 0 });

    const at = new Date('2026-12-01T10:00:00.125Z');
    await store.record('b', { lastHealthCheck: at, lastStatus: 'DEGRADED', lastError: 'y'.repeat(2500), consecutiveFailures: 1 });
    const b = (await store.statesOf(['b', 'a'])).get('b')!;
    expect(b).toEqual({ lastHealthCheck: at, lastStatus: 'DEGRADED', lastError: 'y'.repeat(2000), consecutiveFailures: 1 });
  });
});
