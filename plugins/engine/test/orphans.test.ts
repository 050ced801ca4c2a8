// Reaping an interrupted run: the row becomes Failed with the "interrupted" line; on each destination an object
// without its sidecar (the unfinished part) is removed, while object + sidecar (a complete backup) is kept.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { EventBus, silentLogger, type HoldfastEvents, type StorageAdapter } from '@holdfast/kernel';
import { INTERRUPTED_MESSAGE, reapOrphans } from '../src/queue/orphans.js';
import { engineOptionsFrom } from '../src/queue/engine-options.js';

/** An in-memory destination (test double of a StorageAdapter) recording its deletes. */
function memoryStorage(keys: string[]) {
  const objects = new Set(keys);
  const deleted: string[] = [];
  const adapter: Partial<StorageAdapter> = {
    stat: async (key) => {
      if (!objects.has(key)) throw Object.assign(new Error(`${key} not found`), { code: 'NOT_FOUND' });
      return { key, size: 1, modifiedAt: new Date() };
    },
    delete: async (key) => {
      deleted.push(key);
      objects.delete(key);
    },
    get: async () => Readable.from([]),
  };
  return { adapter: adapter as StorageAdapter, objects, deleted };
}

describe('reapOrphans', () => {
  it('fails the orphan, removes an object left without sidecar, and keeps a complete backup', async () => {
    const key = 'nightly_2026-11-21_00-00-00.dump.gz';
    const complete = memoryStorage([key, `${key}.meta.json`]);
    const unfinished = memoryStorage([key]);
    const storages: Record<string, ReturnType<typeof memoryStorage>> = { a: complete, b: unfinished };
    const logs: Array<{ level: string; message: string }> = [];
    const failed: string[] = [];
    const row = { id: 'exec-1', metadata: JSON.stringify({ stage: '03-upload', target: { key, configIds: ['a', 'b'] } }) };
    const store = {
      dialect: 'sqlite',
      findOrphans: async () => [row],
      failOrphan: async (orphan: { id: string }, message: string) => {
        failed.push(`${orphan.id}: ${message}`);
        return true;
      },
      lastLogSeq: async () => 7,
      appendLogs: async (entries: Array<{ level: string; message: string }>) => void logs.push(...entries),
    };
    const services = {
      catalog: { resolveAdapterConfig: async (configId: string) => ({ configId }) },
      adapters: { storage: (config: { configId: string }) => ({ adapter: storages[config.configId]!.adapter }) },
    };
    const closed = await reapOrphans(store as never, services as never, null, silentLogger, engineOptionsFrom({}));
    expect(closed).toBe(1);
    expect(failed).toEqual([`exec-1: ${INTERRUPTED_MESSAGE}`]);
    expect(logs).toEqual([expect.objectContaining({ level: 'error', message: INTERRUPTED_MESSAGE, stage: '03-upload', seq: 8 })]);
    expect(complete.deleted).toEqual([]);
    expect([...complete.objects].sort()).toEqual([key, `${key}.meta.json`]);
    // The index sidecar a seekable run may have written first goes too (deleting a missing key succeeds).
    expect(unfinished.deleted).toEqual([key, `${key}.index.json`]);
    expect([...unfinished.objects]).toEqual([]);
  });

  it('raises one system_error per pass that closed runs, naming them; a pass that closed nothing raises none', async () => {
    const events = new EventBus();
    const raised: Array<HoldfastEvents['system_error']> = [];
    events.on('system_error', (payload) => void raised.push(payload));
    let rows = [{ id: 'exec-1', metadata: '{}' }, { id: 'exec-2', metadata: '{}' }];
    const store = {
      dialect: 'sqlite',
      findOrphans: async () => rows,
      failOrphan: async () => true,
      lastLogSeq: async () => 0,
      appendLogs: async () => undefined,
    };
    const services = { events };
    expect(await reapOrphans(store as never, services as never, null, silentLogger, engineOptionsFrom({}))).toBe(2);
    rows = [];
    expect(await reapOrphans(store as never, services as never, null, silentLogger, engineOptionsFrom({}))).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(raised).toEqual([{ message: '2 executions crashed (exec-1, exec-2)', source: 'queue', error: INTERRUPTED_MESSAGE }]);
  });
});
