// The migration runner is this package's own (src/migration-runner.ts) so that a server never loads MikroORM's migrator:
// it brings umzug, and umzug its command-line interface with @rushstack's libraries, about 4.4 MiB of V8 heap for
// the life of the process (docs/benchmarks.md, "Session 16"). This migrates a fresh embedded database in a process of
// its own and lists the CommonJS modules it loaded.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'holdfast-migration-footprint-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('migrating a database', () => {
  it('loads neither MikroORM migrator nor umzug nor @rushstack', () => {
    const script = `
      import 'reflect-metadata';
      import { createRequire } from 'node:module';
      import { defineMigration } from '@holdfast/orm-port';
      import { defineEntity } from '@mikro-orm/core';
      import { openDatabase } from './dist/index.js';
      const Note = defineEntity({ name: 'TestNote', tableName: 'test_note', properties: (p) => ({ id: p.integer().primary() }) });
      const createTable = defineMigration('20261120-notes-001-table', (knex) => knex.schema.createTable('test_note', (t) => t.increments('id')));
      const notes = { name: 'notes', entities: [Note], migrations: [createTable] };
      const db = await openDatabase({ dataDir: ${JSON.stringify(join(scratch, 'data'))}, plugins: [notes] });
      const applied = await db.migrate();
      await db.close();
      const loaded = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify({ applied, loaded }));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: packageDir, encoding: 'utf8', timeout: 60_000 });
    const { applied, loaded } = JSON.parse(output.trim().split('\n').at(-1)!) as { applied: string[]; loaded: string[] };
    // The migrations ran, and MikroORM itself was loaded (so the module list is a real one) ...
    expect(applied.length).toBeGreaterThan(0);
    expect(loaded.some((file) => file.includes('/node_modules/@mikro-orm/core/'))).toBe(true);
    // ... but none of the migrator's libraries (MikroORM reads the package.json of every @mikro-orm package installed,
    // to compare versions; that is data, not code).
    const heavy = loaded.filter((file) => /\/node_modules\/(umzug|@rushstack|@mikro-orm\/migrations)\//.test(file) && !file.endsWith('/package.json'));
    expect(heavy).toEqual([]);
  });
});
