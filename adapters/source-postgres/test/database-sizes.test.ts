// `databaseSizes()` (issue 47, the restore wizard's list): the databases `listDatabases()` returns, each with
// `pg_database_size`, directly and over SSH (the real sshd on 127.0.0.1:2222, whose user reaches the local server).
import { readFileSync } from 'node:fs';
import { container } from 'tsyringe';
import { afterAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, type SourceAdapter } from '@holdfast/sdk';
import { sshdState } from '@holdfast/tooling/harness/sshd';
import definition from '../src/index.js';
import { createDatabase, dropDatabase, seed, server, sql } from './helpers.js';

const created: string[] = [];
afterAll(async () => {
  await Promise.all(created.map(dropDatabase));
});

function sshSource(): SourceAdapter {
  const sshd = sshdState();
  const config = { ...server, ssh: { host: sshd.host, port: sshd.port, username: sshd.user, hostKeySha256: sshd.hostKeySha256 }, sshPrivateKey: readFileSync(sshd.keyPath, 'utf8') };
  return instantiateAdapter(container, definition, config) as SourceAdapter;
}

describe('source-postgres databaseSizes', () => {
  it('lists what listDatabases lists (while other suites change the list), with pg_database_size, locally and over SSH', async () => {
    const name = await createDatabase('sizes');
    created.push(name);
    await seed(name, 2000);
    const [row] = await sql<{ size: string }>('postgres', 'SELECT pg_database_size($1)::text AS size', [name]);
    const size = row!.size;
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
        const entry = sizes.find((candidate) => candidate.name === name);
        expect(entry?.sizeBytes).toBe(Number(size));
        expect(sizes.every((candidate) => Number.isInteger(candidate.sizeBytes) && candidate.sizeBytes > 0)).toBe(true);
      } finally {
        await adapter.dispose?.();
      }
    }
  });

  it('rejects like listDatabases when the server cannot be reached', async () => {
    const adapter = instantiateAdapter(container, definition, { ...server, port: 1 }) as SourceAdapter;
    await expect(adapter.databaseSizes!()).rejects.toThrow();
  });
});
