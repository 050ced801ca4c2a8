// The engine's StorageUsage port (TOKENS.StorageUsage): observability's storage alerts and usage-over-time route
// read the storage snapshots through it instead of querying the engine's table. Both dialects: the datetime column
// comes back as epoch ms or text from libsql and as Date from PostgreSQL, and the window bounds must match either.
import { randomUUID } from 'node:crypto';
import { TOKENS } from '@holdfast/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createSite, startEngineServer, type EngineServer, type Site } from '../history/harness.js';

describe.each(DIALECTS)('storage usage port on %s', (dialect) => {
  let site: Site;
  let server: EngineServer;
  const start = new Date('2026-11-24T12:00:00Z');
  const at = (minutes: number) => new Date(start.getTime() + minutes * 60_000);

  beforeAll(async () => {
    site = await createSite(dialect);
    server = await startEngineServer(site);
    const platform = server.db.em().getPlatform();
    const rows = [
      { config: 'dest', size: 100, count: 1, minutes: 0 },
      { config: 'dest', size: 140, count: 2, minutes: 1 },
      { config: 'dest', size: 3_000_000_000, count: 3, minutes: 2 },
      { config: 'other', size: 7, count: 1, minutes: 3 },
    ];
    for (const row of rows) {
      await server.knex()('storage_snapshots').insert({
        id: randomUUID(),
        adapter_config_id: row.config,
        adapter_name: row.config,
        adapter_id: 'local',
        size: row.size,
        count: row.count,
        created_at: platform.processDateProperty(at(row.minutes)),
      });
    }
  });

  afterAll(async () => {
    await server?.close();
    await site?.remove();
  });

  it('is provided by the engine and answers the newest snapshots of one destination, newest first', async () => {
    const usage = server.container.resolve(TOKENS.StorageUsage);
    expect(await usage.latest('dest', 2)).toEqual([
      { size: 3_000_000_000, count: 3, createdAt: at(2) },
      { size: 140, count: 2, createdAt: at(1) },
    ]);
    expect(await usage.latest('nothing', 2)).toEqual([]);
  });

  it('answers a window oldest first, both bounds included, at most the limit', async () => {
    const usage = server.container.resolve(TOKENS.StorageUsage);
    expect((await usage.between('dest', at(0), at(2), 100)).map((point) => point.size)).toEqual([100, 140, 3_000_000_000]);
    expect((await usage.between('dest', at(1), at(5), 100)).map((point) => point.createdAt)).toEqual([at(1), at(2)]);
    expect((await usage.between('dest', at(0), at(5), 1)).map((point) => point.size)).toEqual([100]);
    expect(await usage.between('dest', at(3), at(5), 100)).toEqual([]);
  });
});
