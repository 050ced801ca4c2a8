// The scratch capability (test restores) against the local PostgreSQL: figures, a dump restored into a throwaway
// database with the same figures, and that database found and dropped again.
import { describeSourceScratch } from '@holdfast/testkit';
import definition from '../src/index.js';
import { createDatabase, dropDatabase, seed, server } from './helpers.js';

describeSourceScratch<string, Record<string, unknown>>('source-postgres against the local PostgreSQL', {
  definition,
  seed: async () => {
    const database = await createDatabase('scratch');
    await seed(database, 1234);
    return database;
  },
  config: () => ({ host: server.host, port: server.port, user: server.user }),
  database: (database) => database,
  // seed() writes 1234 items and 3 notes.
  expectedFigures: () => ({ 'public.items': 1234, 'public.notes': 3 }),
  cleanup: (database) => dropDatabase(database),
});
