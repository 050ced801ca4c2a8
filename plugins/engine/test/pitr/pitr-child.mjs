// Child process of the point-in-time fault tests (pitr-faults.test.ts, pitr-takeover.test.ts, mysql-pitr-faults.test.ts):
// a real server with the BUILT engine (dist), the job's point-in-time source (PostgreSQL physical mode, or the MySQL
// source when PITR_JOB.sourceAdapter is 'mysql') and a local destination, over the libsql file in
// HOLDFAST_DATA_DIR (or over PITR_DATABASE_URL, a PostgreSQL database shared with another process), with the
// change-log supervisor's short test timings. Its catalog holds one point-in-time job (PITR_JOB: the job id, the
// source config as JSON, its databases, the destination folder). It prints `ready <url> <api key>` and streams until
// the test kills it with SIGKILL, as a crashed Holdfast would be: no shutdown hook runs, pg_receivewal or
// mariadb-binlog is left behind.
import 'reflect-metadata';
import { NotFoundError, TOKENS } from '@holdfast/kernel';
import { createHttpPlugin } from '@holdfast/http';
import { createFirstAdmin, createIdentityPlugin, IDENTITY_SERVICES } from '@holdfast/identity';
import { createPersistencePlugin } from '@holdfast/persistence';
import namingTemplate from '@holdfast/naming-template';
import sourceMysql from '@holdfast/source-mysql';
import sourcePostgres from '@holdfast/source-postgres';
import storageLocal from '@holdfast/storage-local';
import { createEnginePlugin } from '@holdfast/engine';
import { pino } from 'pino';
import { composeServer } from '../support/compose.mjs';

const job = JSON.parse(process.env.PITR_JOB);
const isMysql = job.sourceAdapter === 'mysql';
const configs = {
  source: { configId: 'source', name: isMysql ? 'Fault MariaDB' : 'Fault cluster', kind: 'source', adapterId: isMysql ? 'mysql' : 'postgres', config: job.source, credentials: {} },
  disk: { configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: job.destination }, credentials: {} },
};
// The same plan as the parent's InMemoryJobCatalog builds for this job, so the restarted server streams it unchanged.
const plan = {
  job: { id: job.id, name: job.name, databases: job.databases ?? [], compression: 'ZSTD', pgCompression: '', skipVerification: false, namingPattern: '{job_name}_yyyy-MM-dd_HH-mm-ss', notificationTemplateId: null },
  source: configs.source,
  destinations: [{ ...configs.disk, priority: 0, retention: null }],
  encryption: null,
};
const catalog = {
  async listJobs() {
    return [{ id: job.id, name: job.name, schedule: '', scheduleFrom: 'job', enabled: true }];
  },
  async listStorageDestinations() {
    return [{ configId: 'disk', name: 'Disk', adapterId: 'local' }];
  },
  async resolveRunPlan(id) {
    if (id !== job.id) throw new NotFoundError('Job not found');
    return { ...plan };
  },
  async resolveAdapterConfig(id) {
    return configs[id];
  },
  async encryptionKey() {
    throw new Error('no key');
  },
  async jobNames(ids) {
    return new Map(ids.filter((id) => id === job.id).map((id) => [id, job.name]));
  },
  async notificationBindings() {
    return [];
  },
  async notificationChannels() {
    return [];
  },
};
const values = { maxConcurrentJobs: 1, stuckJobTimeoutMinutes: 360, systemTimezone: 'UTC', 'privacy.recordTriggerActor': true, authPoints: 100_000, apiPoints: 100_000, mutationPoints: 100_000 };
const settings = { async get(key) { return values[key]; } };
const testPorts = {
  name: 'test-ports',
  provides: [TOKENS.JobCatalog, TOKENS.Settings],
  register(container) {
    container.register(TOKENS.JobCatalog, { useValue: catalog });
    container.register(TOKENS.Settings, { useValue: settings });
    container.register(TOKENS.AuditWriter, { useValue: { async write() {} } });
  },
};
const handle = await composeServer({
  dataDir: process.env.HOLDFAST_DATA_DIR,
  // Set by the takeover test: the state lives in a PostgreSQL database another process shares (scale-out).
  databaseUrl: process.env.PITR_DATABASE_URL || undefined,
  logger: pino({ level: process.env.PITR_CHILD_LOG ?? 'silent' }),
  plugins: [
    createPersistencePlugin(),
    createHttpPlugin(),
    createIdentityPlugin({ env: {} }),
    testPorts,
    createEnginePlugin({
      env: {},
      timings: { pollIntervalMs: 200, heartbeatMs: 200, staleAfterMs: 2_000, shutdownGraceMs: 2_000 },
      // FAST_PITR of pitr-server.ts.
      pointInTime: { reloadIntervalMs: 200, leaseCheckMs: 100, flushIntervalMs: 1_000, retry: { firstMs: 100, maxMs: 400 } },
    }),
  ],
  adapters: [isMysql ? sourceMysql : sourcePostgres, storageLocal, namingTemplate],
});
const identity = handle.container.resolve(IDENTITY_SERVICES);
const admin = await createFirstAdmin(identity.database, { email: 'pitr-child@example.test', password: 'correct horse battery', name: 'Ada Admin' });
const { rawKey } = await identity.apiKeys.create(admin.id, { name: 'pitr-child', permissions: ['history:read', 'jobs:execute', 'storage:restore'] });
process.stdout.write(`ready ${handle.url} ${rawKey}\n`);
