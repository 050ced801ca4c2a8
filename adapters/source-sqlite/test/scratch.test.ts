// The scratch capability (test restores) with the sqlite3 CLI: row counts of a database file, and a backup restored
// into a scratch file with the same counts that passes PRAGMA integrity_check.
import { join } from 'node:path';
import { describeSourceScratch } from '@holdfast/testkit';
import definition from '../src/index.js';
import { createDatabase, removeAll, tempDir } from './helpers.js';

describeSourceScratch<{ dir: string; file: string }, Record<string, unknown>>('source-sqlite with the sqlite3 CLI', {
  definition,
  seed: async () => {
    const dir = await tempDir('scratch');
    const file = join(dir, 'app.sqlite');
    createDatabase(file, 321);
    return { dir, file };
  },
  config: ({ file }) => ({ path: file }),
  database: ({ file }) => file,
  // createDatabase() writes 321 items, and its trigger one log row per item; the view is not a table.
  expectedFigures: () => ({ items: 321, log: 321 }),
  cleanup: ({ dir }) => removeAll(dir),
});
