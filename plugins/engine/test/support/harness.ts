// Starts a real Holdfast server (compose.mjs: real persistence, real HTTP, real identity) with the
// engine plugin, over libsql or a throwaway PostgreSQL. The catalog ports are TEST DOUBLES (see doubles.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKENS, type AnyAdapterDefinition, type HoldfastPlugin } from '@holdfast/kernel';
import { createHttpPlugin } from '@holdfast/http';
import { createFirstAdmin, createIdentityPlugin, IDENTITY_SERVICES } from '@holdfast/identity';
import { createPersistencePlugin } from '@holdfast/persistence';
import { createThrowawayPostgres, type ThrowawayDatabase } from '@holdfast/tooling/harness/test-site';
import namingTemplate from '@holdfast/naming-template';
import retentionGfs from '@holdfast/retention-gfs';
import sourcePostgres from '@holdfast/source-postgres';
import storageLocal from '@holdfast/storage-local';
import { pino } from 'pino';
import { composeServer, type ComposedServer } from './compose.mjs';
import { createEnginePlugin, ENGINE, type EngineOptions } from '../../src/index.js';
import { InMemoryJobCatalog, MapSettings, RecordingAuditWriter } from './doubles.js';
import { flakyStorage, generatedSource, undeletableStorage } from './test-adapters.js';

export type Dialect = 'sqlite' | 'postgresql';

/** A started server with its doubles and helpers. */
export interface EngineServer {
  handle: ComposedServer;
  url: string;
  catalog: InMemoryJobCatalog;
  settings: MapSettings;
  audit: RecordingAuditWriter;
  engine(): import('../../src/index.js').Engine;
  /** Creates an API key with `permissions` and returns the raw key. */
  apiKey(name: string, permissions: string[]): Promise<string>;
  close(): Promise<void>;
}

const ADAPTERS: AnyAdapterDefinition[] = [storageLocal, sourcePostgres, namingTemplate, retentionGfs, generatedSource, flakyStorage, undeletableStorage] as unknown as AnyAdapterDefinition[];

/** A database for one test: a temp data dir and, on PostgreSQL, a throwaway database. */
export interface TestDatabaseTarget {
  dialect: Dialect;
  dataDir: string;
  url?: string;
  drop(): Promise<void>;
}

export async function createTarget(dialect: Dialect): Promise<TestDatabaseTarget> {
  const dataDir = await mkdtemp(join(tmpdir(), 'holdfast-engine-'));
  const postgres: ThrowawayDatabase | undefined = dialect === 'postgresql' ? await createThrowawayPostgres() : undefined;
  return {
    dialect,
    dataDir,
    url: postgres?.url,
    drop: async () => {
      await postgres?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

let adminCounter = 0;

/** Starts a server over `target`; several servers may share one target (multi-process drills). */
export async function startEngineServer(
  target: TestDatabaseTarget,
  options: { timings?: Partial<EngineOptions>; catalog?: InMemoryJobCatalog; settings?: MapSettings; plugins?: HoldfastPlugin[]; adapters?: AnyAdapterDefinition[] } = {},
): Promise<EngineServer> {
  const catalog = options.catalog ?? new InMemoryJobCatalog();
  const settings = options.settings ?? new MapSettings();
  const audit = new RecordingAuditWriter();
  const testPorts: HoldfastPlugin = {
    name: 'test-ports',
    // The audit writer replaces identity's on purpose (registered later); only the tokens nobody else has are declared.
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
    createEnginePlugin({ env: {}, timings: { pollIntervalMs: 200, heartbeatMs: 200, staleAfterMs: 2_000, shutdownGraceMs: 2_000, ...options.timings } }),
    ...(options.plugins ?? []),
  ];
  const handle = await composeServer({ dataDir: target.dataDir, databaseUrl: target.url, plugins, logger: pino({ level: 'silent' }), adapters: [...ADAPTERS, ...(options.adapters ?? [])] });
  const identity = handle.container.resolve(IDENTITY_SERVICES);
  // Identity reads its rate limits through TOKENS.Settings, here the test double.
  for (const key of ['authPoints', 'apiPoints', 'mutationPoints']) settings.values.set(key, 100_000);
  return {
    handle,
    url: handle.url,
    catalog,
    settings,
    audit,
    engine: () => handle.container.resolve(ENGINE),
    apiKey: async (name, permissions) => {
      const users = await identity.users.count();
      const admin = users === 0 ? await createFirstAdmin(identity.database, { email: `admin${adminCounter++}@example.test`, password: 'correct horse battery', name: 'Ada Admin' }) : (await identity.users.list())[0]!;
      const issued = await identity.apiKeys.create(admin.id, { name, permissions });
      return issued.rawKey;
    },
    close: () => handle.close(),
  };
}

/** JSON request helper. */
export async function call(url: string, method: string, path: string, options: { key?: string; json?: unknown } = {}): Promise<{ status: number; body: any }> {  
  const headers: Record<string, string> = {};
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${url}${path}`, { method, headers, body: options.json === undefined ? undefined : JSON.stringify(options.json) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Polls an execution until it ends; returns the final representation. */
export async function waitForEnd(url: string, key: string, id: string, timeoutMs = 60_000): Promise<any> {  
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await call(url, 'GET', `/api/executions/${id}?includeLogs=true`, { key });
    if (reply.status !== 200) throw new Error(`poll failed: ${reply.status} ${JSON.stringify(reply.body)}`);
    if (['Success', 'Partial', 'Failed', 'Cancelled'].includes(reply.body.data.status)) return reply.body.data;
    if (Date.now() > deadline) throw new Error(`execution ${id} did not end in ${timeoutMs} ms: ${JSON.stringify(reply.body.data)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
