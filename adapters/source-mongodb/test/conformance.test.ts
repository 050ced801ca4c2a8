import { readFileSync } from 'node:fs';
import { afterAll, expect } from 'vitest';
import { describeAdapterDefinition, describeSourceAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { FakeMongoServer } from './fake-mongo.js';
import { canonical, seedDocuments } from './seed.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, { packageJson, sampleConfig: { uri: 'mongodb://127.0.0.1:27017' } });

// No MongoDB server can run here: the suite runs against the labelled wire-protocol fake (test/fake-mongo.ts).
const fake = await FakeMongoServer.start();
afterAll(() => fake.stop());

let counter = 0;
interface Seeded {
  db: string;
}

describeSourceAdapter<Seeded, Record<string, unknown>>('source-mongodb (driver export) against a fake MongoDB wire protocol server', {
  definition,
  seed: async () => {
    const db = `seed_${++counter}`;
    const people = fake.collection(db, 'people', true)!;
    people.docs.push(...seedDocuments());
    people.indexes.push({ v: 2, key: { email: 1 }, name: 'email_1', unique: true });
    fake.collection(db, 'log', true)!.options = { capped: true, size: 1_048_576 };
    fake.collection(db, 'log')!.docs.push({ _id: 1, line: 'started' });
    return { db };
  },
  config: () => ({ uri: fake.uri, method: 'driver', batchSize: 500 }),
  dumpOptions: (seeded) => ({ databases: [seeded.db] }),
  badConnectionConfig: { uri: 'mongodb://127.0.0.1:1/?directConnection=true', connectTimeoutSeconds: 2 },
  restoreTarget: (seeded) => ({ database: `${seeded.db}_restored` }),
  verify: async (restored, seeded) => {
    const original = fake.data.get(seeded.db)!;
    const copy = fake.data.get(restored.database!)!;
    expect([...copy.keys()].sort()).toEqual([...original.keys()].sort());
    for (const [name, coll] of original) {
      const other = copy.get(name)!;
      expect(other.docs.length).toBe(coll.docs.length);
      expect(canonical(other.docs)).toBe(canonical(coll.docs));
      expect(canonical(other.options)).toBe(canonical(coll.options));
      expect(other.indexes.map((index) => canonical({ ...index, v: undefined }))).toEqual(coll.indexes.map((index) => canonical({ ...index, v: undefined })));
    }
  },
  cleanup: (seeded, restored) => {
    fake.data.delete(seeded.db);
    if (restored?.database) fake.data.delete(restored.database);
  },
});
