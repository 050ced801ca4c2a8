// Starts a real Holdfast server (persistence, HTTP, identity, engine) for the point-in-time tests, like
// support/harness.ts, with the change-log supervisor's timings shortened and the point-in-time test doubles registered.
import { TOKENS, type AnyAdapterDefinition, type HoldfastPlugin } from '@holdfast/kernel';
import { createHttpPlugin } from '@holdfast/http';
import { createFirstAdmin, createIdentityPlugin, IDENTITY_SERVICES } from '@holdfast/identity';
import { createPersistencePlugin } from '@holdfast/persistence';
import { ORM_DATABASE } from '@holdfast/orm-port';
import namingTemplate from '@holdfast/naming-template';
import retentionGfs from '@holdfast/retention-gfs';
import storageLocal from '@holdfast/storage-local';
import { pino } from 'pino';
import { composeServer } from '../support/compose.mjs';
import { InMemoryJobCatalog, MapSettings, RecordingAuditWriter } from '../support/doubles.js';
import type { EngineServer, TestDatabaseTarget } from '../support/harness.js';
import { createEnginePlugin, ENGINE } from '../../src/index.js';
import { ChangeLogStore } from '../../src/pitr/change-log-store.js';
import { pitrDoubleSource, refusingStorage } from './pitr-doubles.js';

const ADAPTERS = [storageLocal, namingTemplate, retentionGfs, pitrDoubleSource, refusingStorage] as unknown as AnyAdapterDefinition[];

/** Supervisor timings of these tests: passes every 200 ms, retries from 100 ms. */
export const FAST_PITR = { reloadIntervalMs: 200, leaseCheckMs: 100, flushIntervalMs: 1_000, retry: { firstMs: 100, maxMs: 400 } };

let adminCounter = 0;

/** A started server whose change-log tables the test can read. */
export interface PitrServer extends EngineServer {
  changeLogs: ChangeLogStore;
}

export async function startPitrServer(target: TestDatabaseTarget, options: { catalog?: InMemoryJobCatalog; adapters?: AnyAdapterDefinition[] } = {}): Promise<PitrServer> {
  const catalog = options.catalog ?? new InMemoryJobCatalog();
  const settings = new MapSettings();
  const audit = new RecordingAuditWriter();
  const testPorts: HoldfastPlugin = {
    name: 'test-ports',
    provides: [TOKENS.JobCatalog, TOKENS.Settings],
    register(container) {
      container.register(TOKENS.JobCatalog, { useValue: catalog });
      container.register(TOKENS.Settings, { useValue: settings });
      container.register(TOKENS.AuditWriter, { useValue: audit });
    },
  };
  const plugins = [
    createPersistencePlugin(),
    createHttpPlugin(),
    createIdentityPlugin({ env: {} }),
    testPorts,
    createEnginePlugin({ env: {}, timings: { pollIntervalMs: 200, heartbeatMs: 200, staleAfterMs: 2_000, shutdownGraceMs: 2_000 }, pointInTime: FAST_PITR }),
  ];
  const handle = await composeServer({ dataDir: target.dataDir, databaseUrl: target.url, plugins, logger: pino({ level: 'silent' }), adapters: [...ADAPTERS, ...(options.adapters ?? [])] });
  const identity = handle.container.resolve(IDENTITY_SERVICES);
  for (const key of ['authPoints', 'apiPoints', 'mutationPoints']) settings.values.set(key, 100_000);
  return {
    handle,
    url: handle.url,
    catalog,
    settings,
    audit,
    changeLogs: new ChangeLogStore(handle.container.resolve(ORM_DATABASE)),
    engine: () => handle.container.resolve(ENGINE),
    apiKey: async (name, permissions) => {
      const users = await identity.users.count();
      const admin = users === 0 ? await createFirstAdmin(identity.database, { email: `pitr-admin${adminCounter++}@example.test`, password: 'correct horse battery', name: 'Ada Admin' }) : (await identity.users.list())[0]!;
      return (await identity.apiKeys.create(admin.id, { name, permissions })).rawKey;
    },
    close: () => handle.close(),
  };
}

/** Polls `check` until it returns a truthy value (or fails after `timeoutMs`, saying what it waited for). */
export async function until<T>(what: string, check: () => T | Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
