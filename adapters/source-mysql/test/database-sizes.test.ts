// `databaseSizes()` (issue 47, the restore wizard's list): the user databases `listDatabases()` returns, each with
// the sum of data_length + index_length of information_schema.tables (0 without tables), directly and over SSH.
import { readFileSync } from 'node:fs';
import { container } from 'tsyringe';
import { afterAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, type SourceAdapter } from '@holdfast/sdk';
import { sshdState } from '@holdfast/tooling/harness/sshd';
import definition from '../src/index.js';
import { createDatabase, dropDatabases, seed, server, sql } from './helpers.js';

const created: string[] = [];
afterAll(async () => {
  await dropDatabases(...created);
});

function sshSource(): SourceAdapter {
  const sshd = sshdState();
  const config = { ...server, ssh: { host: sshd.host, port: sshd.port, username: sshd.user, hostKeySha256: sshd.hostKeySha256 }, sshPrivateKey: readFileSync(sshd.keyPath, 'utf8') };
  return instantiateAdapter(container, definition, config) as SourceAdapter;
}

describe('source-mysql databaseSizes', () => {
  it('lists what listDatabases lists (while other suites change the list), with the tables data and index length, locally and over SSH', async () => {
    const filled = await createDatabase('sizes');
    const empty = await createDatabase('sizes_empty');
    created.push(filled, empty);
    await seed(filled, 2000);
    // InnoDB recomputes the sizes information_schema shows in the background after many inserts (persistent
    // statistics), so a size read right after the seed can change while the adapter reads it (seen in CI: 32768 read
    // here, 1605632 by the adapter). ANALYZE makes them current now; nothing changes the tables afterwards.
    await sql('ANALYZE TABLE items, audit', [], filled);
    const [row] = await sql<{ size: string }>('SELECT CAST(SUM(data_length + index_length) AS CHAR) AS size FROM information_schema.tables WHERE table_schema = ?', [filled]);
    for (const adapter of [instantiateAdapter(container, definition, server) as SourceAdapter, sshSource()]) {
      try {
        // Other suites create and drop databases on the same server meanwhile, so the listing is compared with
        // one taken just before and one just after: every database in both is listed, each once. (A name in
        // neither can be real too: a database that lived only while the sizes were read, as CI saw once.)
        const before = await adapter.listDatabases();
        const sizes = await adapter.databaseSizes!();
        const after = await adapter.listDatabases();
        const names = sizes.map((entry) => entry.name);
        expect(before.filter((name) => after.includes(name)).filter((name) => !names.includes(name))).toEqual([]);
        expect(new Set(names).size).toBe(names.length);
        expect(sizes.find((entry) => entry.name === filled)?.sizeBytes).toBe(Number(row!.size));
        expect(Number(row!.size)).toBeGreaterThan(0);
        expect(sizes.find((entry) => entry.name === empty)?.sizeBytes).toBe(0);
      } finally {
        await adapter.dispose?.();
      }
    }
  });
});
