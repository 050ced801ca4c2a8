// Child process of the crash drill (crash-drill.test.ts): a real server with the BUILT engine (dist), a slow
// TEST-ONLY source and a local destination, over the libsql file in HOLDFAST_DATA_DIR. It queues one run, prints
// `ready <executionId>` and keeps running until the test kills it with SIGKILL mid-upload.
import 'reflect-metadata';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { TOKENS } from '@holdfast/kernel';
import { defineSourceAdapter, inject, injectable, z } from '@holdfast/sdk';
import { createHttpPlugin } from '@holdfast/http';
import { createPersistencePlugin } from '@holdfast/persistence';
import storageLocal from '@holdfast/storage-local';
import { composeServer } from './compose.mjs';
import namingTemplate from '@holdfast/naming-template';
import { createEnginePlugin, ENGINE } from '@holdfast/engine';
import { pino } from 'pino';

class SlowSource {
  constructor(config) {
    this.config = config;
  }
  async dump({ signal }) {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const stream = Readable.from((async function* () {
      for (;;) {
        await delay(20, undefined, { signal });
        yield chunk;
      }
    })());
    return { stream, done: new Promise(() => {}), extension: '.bin' };
  }
}
// Parameter decorators run before class decorators: inject first, then injectable.
inject(TOKENS.AdapterConfig)(SlowSource, undefined, 0);
injectable()(SlowSource);
const slowSource = defineSourceAdapter({
  id: 'endless',
  displayName: 'Endless (test only)',
  configSchema: z.object({}),
  capabilities: { multipleDatabases: false, listDatabases: false, restore: false, fileArchive: false },
  implementation: SlowSource,
});

const destination = process.env.DRILL_DESTINATION;
const configs = {
  src: { configId: 'src', name: 'Endless', kind: 'source', adapterId: 'endless', config: {}, credentials: {} },
  disk: { configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: destination }, credentials: {} },
};
const catalog = {
  async resolveRunPlan() {
    return {
      job: { id: 'job', name: 'drill', databases: [], compression: 'GZIP', pgCompression: '', skipVerification: false, namingPattern: '{job_name}_yyyy-MM-dd_HH-mm-ss', notificationTemplateId: null },
      source: configs.src,
      destinations: [{ ...configs.disk, priority: 0, retention: null }],
      encryption: null,
    };
  },
  async resolveAdapterConfig(id) {
    return configs[id];
  },
  async encryptionKey() {
    throw new Error('no key');
  },
  async jobNames(ids) {
    return new Map(ids.filter((id) => id === 'job').map((id) => [id, 'drill']));
  },
};
const settings = { async get(key) { return { maxConcurrentJobs: 1, systemTimezone: 'UTC' }[key]; } };
const testPorts = {
  name: 'test-ports',
  provides: [TOKENS.JobCatalog, TOKENS.Settings],
  register(container) {
    container.register(TOKENS.JobCatalog, { useValue: catalog });
    container.register(TOKENS.Settings, { useValue: settings });
  },
};
const handle = await composeServer({
  dataDir: process.env.HOLDFAST_DATA_DIR,
  logger: pino({ level: process.env.DRILL_LOG ?? 'silent' }),
  plugins: [createPersistencePlugin(), createHttpPlugin(), testPorts, createEnginePlugin({ env: {}, timings: { pollIntervalMs: 200, heartbeatMs: 200 } })],
  adapters: [slowSource, storageLocal, namingTemplate],
});
const execution = await handle.container.resolve(ENGINE).enqueueRun('job', { type: 'Manual', label: 'drill' });
process.stdout.write(`ready ${execution.id}\n`);
