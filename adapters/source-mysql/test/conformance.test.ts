import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { describeAdapterDefinition, describeSourceAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { createDatabase, definitions, dropDatabases, seed, server, tableRows, uniqueName } from './helpers.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, { packageJson, sampleConfig: { host: '127.0.0.1', user: 'backup', password: 'x' } });

interface Seeded {
  database: string;
  target?: string;
}

describeSourceAdapter<Seeded, Record<string, unknown>>('source-mysql against the local MariaDB', {
  definition,
  seed: async () => {
    const database = await createDatabase('conf');
    await seed(database, 4000);
    return { database };
  },
  config: () => ({ ...server }),
  badConnectionConfig: { host: '127.0.0.1', port: 1, user: 'root', connectTimeoutSeconds: 2 },
  dumpOptions: (seeded) => ({ databases: [seeded.database] }),
  restoreTarget: (seeded) => {
    seeded.target = uniqueName('conf_restored');
    return { database: seeded.target };
  },
  verify: async (restored, seeded) => {
    expect(await tableRows(restored.database!)).toEqual(await tableRows(seeded.database));
    expect(await definitions(restored.database!)).toEqual(await definitions(seeded.database));
  },
  cleanup: (seeded) => dropDatabases(seeded.database, seeded.target),
});
