import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { describeAdapterDefinition, describeSourceAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { compareSnapshots, flush, seed, server, snapshot } from './helpers.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, { packageJson, sampleConfig: { host: '127.0.0.1', password: 'x', mode: 'rdb' } });

// Database 10 is seeded, 11 receives the restore; the checks of this suite run one after another.
const SEEDED = 10;
const TARGET = 11;

describeSourceAdapter<number, Record<string, unknown>>('source-redis (logical mode) against the local Redis', {
  definition,
  seed: async () => {
    await flush(SEEDED, TARGET);
    await seed(SEEDED);
    return SEEDED;
  },
  config: (db) => ({ ...server, database: db, mode: 'logical' }),
  badConnectionConfig: { host: '127.0.0.1', port: 1, connectTimeoutSeconds: 2 },
  dumpOptions: (db) => ({ databases: [String(db)] }),
  restoreTarget: () => ({ database: String(TARGET) }),
  verify: async (restored, db) => {
    const expected = await snapshot(db);
    expect(expected.size).toBeGreaterThan(2000);
    expect(compareSnapshots(await snapshot(Number(restored.database)), expected)).toEqual([]);
  },
  cleanup: () => flush(SEEDED, TARGET),
});
