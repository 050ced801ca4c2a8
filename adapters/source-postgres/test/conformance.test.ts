// Regression (issue 10.13): source-postgres had no conformance test. The testkit's source suite runs against the
// local PostgreSQL 15 (trust auth): round trip compared table by table, connect failure, abort mid-dump with no
// pg_dump left behind, health check and discovery.
import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeSourceAdapter } from '@holdfast/testkit';
import { expect } from 'vitest';
import definition from '../src/index.js';
import { checksums, createDatabase, dropDatabase, seed, server } from './helpers.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, { packageJson, sampleConfig: { host: '127.0.0.1', user: 'backup', password: 'sample-secret' } });

interface Seeded {
  database: string;
  expected: Record<string, string>;
}

describeSourceAdapter<Seeded, Record<string, unknown>>('source-postgres against the local PostgreSQL', {
  definition,
  // About 3 MiB of rows, so the abort check stops a dump that is still running.
  seed: async () => {
    const database = await createDatabase('conf');
    return { database, expected: await seed(database, 40_000) };
  },
  config: () => ({ host: server.host, port: server.port, user: server.user }),
  badConnectionConfig: { host: '127.0.0.1', port: 1, user: server.user, connectTimeoutSeconds: 2 },
  dumpOptions: (seeded) => ({ databases: [seeded.database] }),
  restoreTarget: (seeded) => ({ database: `${seeded.database}_restored` }),
  verify: async (restored, seeded) => {
    expect(Object.keys(seeded.expected)).toEqual(['items', 'notes']);
    expect(await checksums(restored.database!)).toEqual(seeded.expected);
  },
  cleanup: async (seeded, restored) => {
    await dropDatabase(seeded.database);
    if (restored?.database) await dropDatabase(restored.database);
  },
});
