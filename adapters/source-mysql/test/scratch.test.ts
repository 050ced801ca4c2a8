// The scratch capability (test restores) against the local MariaDB: figures, a dump restored into a throwaway
// database with the same figures, and that database found and dropped again.
import { describeSourceScratch } from '@holdfast/testkit';
import definition from '../src/index.js';
import { createDatabase, dropDatabases, seed, server } from './helpers.js';

describeSourceScratch<string, Record<string, unknown>>('source-mysql against the local MariaDB', {
  definition,
  seed: async () => {
    const database = await createDatabase('scratch');
    await seed(database, 777);
    return database;
  },
  config: () => ({ host: server.host, port: server.port, user: server.user }),
  database: (database) => database,
  // seed() writes 777 items; its trigger writes one audit row per item.
  expectedFigures: () => ({ audit: 777, items: 777 }),
  cleanup: (database) => dropDatabases(database),
});
