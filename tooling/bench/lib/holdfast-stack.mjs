// An in-process Holdfast for the benchmarks (composed by @holdfast/boot): persistence, catalog, engine and http plugins with the real adapters
// the measured runs use, on an ephemeral port. Authentication is a fixed bench token mapped to a super
// administrator (the bench measures backups and queries, not sign-in).
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { createCatalogPlugin } from '@holdfast/catalog';
import { createEnginePlugin } from '@holdfast/engine';
import { composeHoldfast } from '@holdfast/boot';
import { createHttpPlugin } from '@holdfast/http';
import { TOKENS } from '@holdfast/kernel';
import { createPersistencePlugin } from '@holdfast/persistence';
import pino from 'pino';
import { container as rootContainer } from 'tsyringe';

const ADAPTERS = ['@holdfast/source-postgres', '@holdfast/source-directory', '@holdfast/storage-local', '@holdfast/naming-template', '@holdfast/retention-gfs'];
const TOKEN = randomBytes(16).toString('hex');

/**
 * Starts the stack on `dataDir` (libsql) or `databaseUrl` (PostgreSQL); answers `call()` and `close()`. `extraAdapters`: more adapter
 * packages to load (the MariaDB recovery point tool needs `@holdfast/source-mysql`). `systemKey`
 * (64 hex): the system encryption key, random when not given. `pointInTime`: change-log supervisor timings (the PITR
 * bench picks a new job up sooner than the production 15 s pass); absent: the production defaults.
 */
export async function startHoldfast({ dataDir, databaseUrl, startPlugins = true, systemKey, pointInTime, extraAdapters = [] }) {
  const container = rootContainer.createChildContainer();
  const logger = pino({ level: process.env.HOLDFAST_BENCH_LOG ?? 'warn' }, pino.destination(2));
  const adapters = await Promise.all([...ADAPTERS, ...extraAdapters].map(async (name) => (await import(name)).default));
  container.register(TOKENS.Authenticator, {
    useValue: {
      authenticate: async (request) =>
        request.headers.authorization === `Bearer ${TOKEN}` ? { userId: 'bench', permissions: [], isSuperAdmin: true, authMethod: 'session', actorName: 'bench' } : null,
    },
  });
  container.register(TOKENS.AuditWriter, { useValue: { write: async () => undefined } });
  // A second process on the same data directory (a restore after a backup) must bring the same system key.
  const env = { HOLDFAST_ENCRYPTION_KEY: systemKey ?? randomBytes(32).toString('hex') };
  const plugins = [createPersistencePlugin(), createCatalogPlugin({ env }), createEnginePlugin({ reporting: { isSchedulerEnabled: false }, ...(pointInTime ? { pointInTime } : {}) }), createHttpPlugin()];
  const stack = await composeHoldfast({
    plugins,
    container,
    dataDir,
    databaseUrl,
    core: { logger, runtime: { version: '0.1.0-bench' }, adapters },
    startPlugins,
    http: { port: 0, host: '127.0.0.1', dropConnectionsOnClose: true },
  });
  const db = stack.database;
  const url = stack.url;
  return {
    db,
    url,
    /** The stack's event bus: the engine's outcome events tell a benchmark when a run has finished. */
    events: container.resolve(TOKENS.EventBus),
    async call(method, path, body) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      const json = text ? JSON.parse(text) : undefined;
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 500)}`);
      return json;
    },
    async close() {
      await stack.close();
    },
  };
}
