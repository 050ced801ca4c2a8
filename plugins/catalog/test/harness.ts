// A real catalog server for tests: the persistence plugin on a temp libsql file or a throwaway PostgreSQL
// database, the catalog plugin, and the http plugin's koa app on an ephemeral port. Identity is replaced by a
// token-based fake authenticator and a recording audit writer (the kernel ports as defined).
import { Writable } from 'node:stream';
import { composeHoldfast } from '@holdfast/boot';
import { createHttpPlugin } from '@holdfast/http';
import {
  TOKENS,
  type AdapterHealth,
  type AnyAdapterDefinition,
  type AdapterHealthState,
  type AuditEntry,
  type AuthContext,
  type HoldfastPlugin,
  type SystemTaskScheduleRecord,
  type SystemTaskSchedules,
} from '@holdfast/kernel';
import namingTemplate from '@holdfast/naming-template';
import type { HoldfastDatabase } from '@holdfast/database';
import { createPersistencePlugin } from '@holdfast/persistence';
import { createTestSite, type TestDialect, type TestSite } from '@holdfast/tooling/harness/test-site';
import retentionGfs from '@holdfast/retention-gfs';
import storageS3 from '@holdfast/storage-s3';
import pino from 'pino';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { CATALOG, createCatalogPlugin, RECOVERY_KIT_BUILDER, type Catalog, type CatalogOptions } from '../src/index.js';
import { fakeDatabase, fakeDrive, fakeHook, fakeStore, fakeVersionedDatabase } from './fixture-adapters.js';

export type Dialect = TestDialect;

/** Where one test's database lives. */
export type Site = TestSite;

export function createSite(dialect: Dialect): Promise<Site> {
  return createTestSite(dialect, 'catalog');
}

/** Bearer tokens the fake authenticator knows; `perm:a,b` gives exactly those permissions. */
export function identityOf(token: string): AuthContext | null {
  if (token === 'admin') return { userId: 'u-admin', permissions: [], isSuperAdmin: true, authMethod: 'session' };
  if (token.startsWith('perm:')) {
    return { userId: `u-${token.length}`, permissions: token.slice(5).split(','), isSuperAdmin: false, authMethod: 'apikey', apiKeyId: 'k' };
  }
  return null;
}

export interface CatalogServer {
  url: string;
  container: DependencyContainer;
  catalog: Catalog;
  db: HoldfastDatabase;
  logs: string[];
  audits: AuditEntry[];
  /** The stand-in of observability's task schedules the export and import go through. */
  systemTasks: SystemTaskSchedules;
  /** Calls the API; the body is sent as JSON. Answers status, headers, raw text and parsed JSON. */
  call(method: string, path: string, body?: unknown, token?: string): Promise<Reply>;
  close(): Promise<void>;
}

/** Parsed JSON of a response; its shape is what the assertions check. */
export type JsonValue = ReturnType<typeof JSON.parse>;

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: JsonValue;
}

/** Every line the suites' loggers wrote, for the leak test. */
export const ALL_LOG_LINES: string[] = [];

/** Extras of one suite: more adapters beside the standard ones, catalog options. */
export interface CatalogExtras {
  adapters?: AnyAdapterDefinition[];
  catalog?: Omit<CatalogOptions, 'env'>;
}

export async function startCatalog(site: Site, env: NodeJS.ProcessEnv = { HOLDFAST_ENCRYPTION_KEY: TEST_KEY_HEX }, extras: CatalogExtras = {}): Promise<CatalogServer> {
  const container = rootContainer.createChildContainer();
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      const text = chunk.toString('utf8');
      logs.push(text);
      ALL_LOG_LINES.push(text);
      callback();
    },
  });
  const logger = pino({ level: 'debug' }, sink);
  const adapters = [fakeDatabase, fakeVersionedDatabase, fakeStore, fakeDrive, fakeHook, retentionGfs, namingTemplate, storageS3, ...(extras.adapters ?? [])];
  const audits: AuditEntry[] = [];
  container.register(TOKENS.Authenticator, {
    useValue: { authenticate: async (request) => identityOf(String(request.headers.authorization ?? '').replace(/^Bearer /, '')) },
  });
  container.register(TOKENS.AuditWriter, { useValue: { write: async (entry) => void audits.push(entry) } });
  // The engine's builder cannot be a dev dependency here (engine tests depend on the server, which loads the
  // catalog: a build cycle); this stand-in follows its documented contract ({ name, content, mode }[]).
  container.register(RECOVERY_KIT_BUILDER, {
    useValue: async ({ key, profileName }) => [
      { name: 'holdfast-decrypt.mjs', content: '// decrypt script\n', mode: 0o755 },
      { name: 'holdfast-key.txt', content: `# ${profileName ?? ''}\n${Buffer.from(key).toString('hex')}\n`, mode: 0o600 },
    ],
  });

  // Observability keeps the health state (its adapter_health table, tested there and on the assembled server); it is
  // not a dev dependency here either, so this stand-in follows the port's documented contract.
  const health = new Map<string, AdapterHealthState>();
  container.register(TOKENS.AdapterHealth, {
    useValue: {
      statesOf: async (ids) => new Map(ids.flatMap((id) => (health.has(id) ? [[id, health.get(id)!] as const] : []))),
      recordConnectionTest: async (id, ok, message) => {
        const failures = health.get(id)?.consecutiveFailures ?? 0;
        health.set(id, { lastHealthCheck: new Date(), lastStatus: ok ? 'ONLINE' : 'OFFLINE', lastError: ok ? null : message.slice(0, 2000), consecutiveFailures: ok ? 0 : failures + 1 });
      },
    } satisfies AdapterHealth,
  });
  // Observability keeps the system task schedules too (tested there and on the assembled server); the export and
  // import carry them through this port, whose stand-in holds the four default schedules.
  const schedules = new Map<string, SystemTaskScheduleRecord>(
    Object.entries({ CLEAN_OLD_LOGS: '30 3 * * *', HEALTH_CHECK: '*/15 * * * *', REFRESH_STORAGE_STATS: '0 * * * *', UPDATE_DB_VERSIONS: '0 4 * * *' }).map(
      ([task, schedule]) => [task, { task, enabled: true, schedule, lastRunAt: null }],
    ),
  );
  const systemTasks: SystemTaskSchedules = {
    list: async () => [...schedules.values()].map((task) => ({ ...task })),
    restore: async (tasks) =>
      tasks.flatMap((task) => {
        const known = schedules.get(task.task);
        if (!known) return [];
        schedules.set(task.task, { ...known, enabled: task.enabled, schedule: task.schedule });
        return [task.task];
      }),
  };
  container.register(TOKENS.SystemTaskSchedules, { useValue: systemTasks });

  const plugins: HoldfastPlugin[] = [createPersistencePlugin(), createCatalogPlugin({ ...extras.catalog, env }), createHttpPlugin()];
  const stack = await composeHoldfast({
    plugins,
    container,
    dataDir: site.dataDir,
    databaseUrl: site.databaseUrl,
    core: { logger, runtime: { version: '0.1.0-test' }, adapters },
    http: { port: 0, host: '127.0.0.1', dropConnectionsOnClose: true },
  });
  const db = stack.database;
  const url = stack.url!;
  return {
    url,
    container,
    catalog: container.resolve(CATALOG),
    db,
    logs,
    audits,
    systemTasks,
    async call(method, path, body, token = 'admin') {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await response.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { status: response.status, headers: response.headers, text, json };
    },
    async close() {
      await stack.close();
    },
  };
}

/** The system key the suites run with (a fixed test value, not a secret). */
export const TEST_KEY_HEX = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

/** Every row of every catalog table, for before/after comparisons. */
export async function snapshotTables(db: HoldfastDatabase): Promise<Record<string, unknown[]>> {
  const knex = db.em().getKnex();
  const tables = [
    'adapter_configs',
    'credential_profiles',
    'encryption_profiles',
    'retention_policies',
    'naming_templates',
    'schedule_presets',
    'notification_templates',
    'jobs',
    'job_destinations',
    'system_settings',
    'system_key_canary',
  ];
  const snapshot: Record<string, unknown[]> = {};
  for (const table of tables) snapshot[table] = await knex(table).select('*').orderBy(1);
  return snapshot;
}
