// A real engine server for the history, dashboard and scheduler suites: the persistence plugin on a temp libsql
// file or a throwaway PostgreSQL database, the engine plugin (not started: no runner claims the seeded rows), and
// the http plugin's koa app on an ephemeral port. The catalog plugin cannot be a dependency of the engine (it
// depends on the engine), so its tables are created by a fixture migration with the columns the engine reads, and
// the kernel ports it would register (JobCatalog, Settings) are small in-memory stand-ins over those rows.
import { randomUUID } from 'node:crypto';
import { composeHoldfast } from '@holdfast/boot';
import { createHttpPlugin } from '@holdfast/http';
import {
  NotFoundError,
  TOKENS,
  type AccessPolicy,
  type AdapterRegistry,
  type AuthContext,
  type EventBus,
  type HoldfastPlugin,
  type JobCatalog,
  type PluginMigration,
  type SettingsReader,
} from '@holdfast/kernel';
import type { HoldfastDatabase } from '@holdfast/database';
import { createPersistencePlugin } from '@holdfast/persistence';
import { createTestSite, type TestDialect, type TestSite } from '@holdfast/tooling/harness/test-site';
import type { Knex } from '@mikro-orm/knex';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { createEnginePlugin, type EnginePluginOptions } from '../../src/index.js';

export type Dialect = TestDialect;
export const DIALECTS: Dialect[] = ['sqlite', 'postgresql'];

/** Where one test's database lives. */
export type Site = TestSite;

export function createSite(dialect: Dialect): Promise<Site> {
  return createTestSite(dialect, 'engine-history');
}

/** The catalog tables as far as the engine reads them (names and columns as the catalog's migration makes them). */
export const catalogFixtureTables: PluginMigration = {
  name: '20261120-catalog-000-fixture',
  async up(builder) {
    const knex = builder as Knex;
    const timestamp = (t: Knex.CreateTableBuilder, name: string) => t.datetime(name, { useTz: true });
    await knex.schema.createTable('jobs', (t) => {
      t.string('id', 36).primary();
      t.string('name', 255).notNullable().unique();
      t.string('schedule', 255).notNullable();
      t.boolean('enabled').notNullable().defaultTo(true);
      t.string('schedule_preset_id', 36).nullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'updated_at').notNullable();
    });
    await knex.schema.createTable('schedule_presets', (t) => {
      t.string('id', 36).primary();
      t.string('name', 255).notNullable().unique();
      t.string('schedule', 255).notNullable();
      timestamp(t, 'updated_at').notNullable();
    });
    await knex.schema.createTable('adapter_configs', (t) => {
      t.string('id', 36).primary();
      t.string('name', 255).notNullable();
      t.string('type', 32).notNullable();
      t.string('adapter_id', 64).notNullable();
      t.text('config').notNullable();
    });
  },
};

/** Bearer tokens the fake authenticator knows: `admin`, `perm:a,b` (exactly those), `scoped:job1,job2`. */
export function identityOf(token: string): AuthContext | null {
  if (token === 'admin') return { userId: 'u-admin', permissions: [], isSuperAdmin: true, authMethod: 'session' };
  if (token.startsWith('perm:')) return { userId: `u-${token}`, permissions: token.slice(5).split(','), isSuperAdmin: false, authMethod: 'apikey', apiKeyId: 'k' };
  if (token.startsWith('scoped:')) return { userId: `scoped|${token.slice(7)}`, permissions: [], isSuperAdmin: false, authMethod: 'session' };
  return null;
}

/** Scoped grants as the identity plugin answers them: `scoped:` users see history of the listed jobs only. */
const scopedPolicy: AccessPolicy = {
  async isAllowed(auth, permission) {
    return auth.isSuperAdmin || auth.permissions.includes(permission) || (auth.userId.startsWith('scoped|') && permission === 'history:read');
  },
  async visibleIds(auth, permission) {
    if (auth.isSuperAdmin || auth.permissions.includes(permission)) return 'all';
    return auth.userId.startsWith('scoped|') ? auth.userId.slice(7).split(',').filter(Boolean) : [];
  },
};

export interface Reply {
  status: number;
   
  json: any;
}

export interface EngineServer {
  url: string;
  container: DependencyContainer;
  db: HoldfastDatabase;
  settings: Map<string, unknown>;
  events: EventBus;
  knex(): Knex;
  call(method: string, path: string, token?: string): Promise<Reply>;
  /** Adds a job row (and its preset) the way the catalog stores it. */
  addJob(job: { name: string; schedule?: string; enabled?: boolean; presetSchedule?: string }): Promise<string>;
  close(): Promise<void>;
}

export interface StartOptions {
  engine?: EnginePluginOptions;
  /** Start plugins (the scheduler and the stats refresher; the engine's runner claims Pending rows). */
  startPlugins?: boolean;
  registry?: AdapterRegistry;
  jobCatalog?: Partial<JobCatalog>;
}

export async function startEngineServer(site: Site, options: StartOptions = {}): Promise<EngineServer> {
  const container = rootContainer.createChildContainer();
  const settings = new Map<string, unknown>([['systemTimezone', 'UTC'], ['maxConcurrentJobs', 1]]);
  const fixture: HoldfastPlugin = { name: 'catalog-fixture', migrations: [catalogFixtureTables] };
  const plugins: HoldfastPlugin[] = [createPersistencePlugin(), fixture, createEnginePlugin(options.engine), createHttpPlugin()];
  // The ports below are registered before the database opens and read it lazily.
  const opening: { db?: HoldfastDatabase } = {};
  const knex = () => opening.db!.em().getKnex();
  const jobCatalog: JobCatalog = {
    async jobNames(ids) {
      const rows: Array<{ id: string; name: string }> = ids.length === 0 ? [] : await knex()('jobs').select('id', 'name').whereIn('id', ids);
      return new Map(rows.map((row) => [row.id, row.name]));
    },
    // The fixture tables stand in for the catalog's; this double answers the listing part of the port from them.
    async listJobs() {
      const rows: Array<{ id: string; name: string; schedule: string; enabled: unknown; preset_schedule: string | null }> = await knex()('jobs as j')
        .leftJoin('schedule_presets as p', 'p.id', 'j.schedule_preset_id')
        .select('j.id', 'j.name', 'j.schedule', 'j.enabled', 'p.schedule as preset_schedule')
        .orderBy('j.id');
      return rows.map((row) => ({
        id: row.id,
        name: row.name,
        schedule: (row.preset_schedule ?? row.schedule ?? '').trim(),
        scheduleFrom: row.preset_schedule ? ('preset' as const) : ('job' as const),
        enabled: row.enabled === true || row.enabled === 1,
      }));
    },
    async listStorageDestinations() {
      const rows: Array<{ id: string; name: string; adapter_id: string }> = await knex()('adapter_configs').select('id', 'name', 'adapter_id').where({ type: 'storage' }).orderBy('id');
      return rows.map((row) => ({ configId: row.id, name: row.name, adapterId: row.adapter_id }));
    },
    async resolveRunPlan() {
      throw new Error('not used by these suites');
    },
    async resolveAdapterConfig(configId) {
      const row = await knex()('adapter_configs').where({ id: configId }).first();
      if (!row) throw new NotFoundError('Adapter config not found');
      return { configId: row.id, name: row.name, kind: 'storage', adapterId: row.adapter_id, config: JSON.parse(row.config), credentials: {} };
    },
    async encryptionKey() {
      throw new Error('not used by these suites');
    },
    async notificationBindings() {
      return [];
    },
    async notificationChannels() {
      return [];
    },
    ...options.jobCatalog,
  };
  const settingsReader: SettingsReader = { get: async <T>(key: string) => settings.get(key) as T };
  container.register(TOKENS.JobCatalog, { useValue: jobCatalog });
  container.register(TOKENS.Settings, { useValue: settingsReader });
  container.register(TOKENS.AccessPolicy, { useValue: scopedPolicy });
  container.register(TOKENS.Authenticator, {
    useValue: { authenticate: async (request) => identityOf(String(request.headers.authorization ?? '').replace(/^Bearer /, '')) },
  });
  // Plugins start only when asked, so tests drive the scheduler and the dashboard refresh by hand.
  const stack = await composeHoldfast({
    plugins,
    container,
    dataDir: site.dataDir,
    databaseUrl: site.databaseUrl,
    core: { runtime: { version: '0.1.0-test' }, adapters: options.registry },
    startPlugins: options.startPlugins === true,
    http: { port: 0, host: '127.0.0.1', dropConnectionsOnClose: true },
  });
  const opened = stack.database;
  opening.db = opened;
  const url = stack.url!;
  return {
    url,
    container,
    db: opened,
    settings,
    events: container.resolve(TOKENS.EventBus),
    knex,
    async call(method, path, token = 'admin') {
      const response = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
      const text = await response.text();
      return { status: response.status, json: text ? JSON.parse(text) : undefined };
    },
    async addJob(job) {
      const id = randomUUID();
      const now = new Date();
      let presetId: string | null = null;
      if (job.presetSchedule) {
        presetId = randomUUID();
        await knex()('schedule_presets').insert({ id: presetId, name: `preset ${presetId}`, schedule: job.presetSchedule, updated_at: now });
      }
      await knex()('jobs').insert({
        id,
        name: job.name,
        schedule: job.schedule ?? '0 3 * * *',
        enabled: job.enabled ?? true,
        schedule_preset_id: presetId,
        created_at: now,
        updated_at: now,
      });
      return id;
    },
    async close() {
      await stack.close();
    },
  };
}
