import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type HoldfastDatabase } from '@holdfast/database';
import { createThrowawayPostgres } from '@holdfast/tooling/harness/test-site';
import { createPersistencePlugin, ensureInstanceRecord } from '../src/index.js';

describe.each(['sqlite', 'postgresql'] as const)('the instance record on %s', (dialect) => {
  let dataDir: string;
  let postgres: { url: string; drop(): Promise<void> } | undefined;
  const opened: HoldfastDatabase[] = [];

  async function open(): Promise<HoldfastDatabase> {
    const db = await openDatabase({ dataDir, databaseUrl: postgres?.url, plugins: [createPersistencePlugin()] });
    opened.push(db);
    return db;
  }

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'holdfast-persistence-'));
    postgres = dialect === 'postgresql' ? await createThrowawayPostgres() : undefined;
  });

  afterEach(async () => {
    for (const db of opened.splice(0)) await db.close();
    await postgres?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('is created by the plugin\'s migration and kept across starts', async () => {
    const db = await open();
    expect(await db.migrate()).toEqual(['20261120-persistence-001-instance']);
    const first = await ensureInstanceRecord(db.em());
    const second = await ensureInstanceRecord(db.em());
    expect(first.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.id).toBe(first.id);
    await db.close();

    const reopened = await open();
    expect(await reopened.migrate()).toEqual([]);
    expect((await ensureInstanceRecord(reopened.em())).id).toBe(first.id);
  });
});
