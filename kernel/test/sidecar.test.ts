import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { AdapterError, isSidecarKey, MAX_SIDECAR_BYTES, readSidecarObject, SidecarFormatError, type StorageAdapter } from '../src/index.js';

/** A storage double answering `get` from a map; other keys are NOT_FOUND, `broken` fails like an unreachable server. */
function storageWith(objects: Record<string, Buffer | 'broken'>): StorageAdapter {
  return {
    get: async (key: string) => {
      const object = objects[key];
      if (object === 'broken') throw new AdapterError('storage-test', 'TRANSIENT', 'connection reset');
      if (!object) throw new AdapterError('storage-test', 'NOT_FOUND', `${key} not found`);
      return Readable.from([object]);
    },
  } as unknown as StorageAdapter;
}

describe('readSidecarObject', () => {
  it('reads the JSON object of a backup sidecar, and null when there is none', async () => {
    const storage = storageWith({ 'a.dump.meta.json': Buffer.from('{"sha256":"ab","locked":true}') });
    await expect(readSidecarObject(storage, 'a.dump')).resolves.toEqual({ sha256: 'ab', locked: true });
    await expect(readSidecarObject(storage, 'missing.dump')).resolves.toBeNull();
  });

  it.each([
    ['too large', Buffer.alloc(MAX_SIDECAR_BYTES + 1, 32), /larger than/],
    ['not JSON', Buffer.from('{oops'), /not valid JSON/],
    ['an array', Buffer.from('[1,2]'), /not a JSON object/],
  ])('refuses a sidecar that is %s with a SidecarFormatError naming the file', async (_label, body, message) => {
    const error = await readSidecarObject(storageWith({ 'b.dump.meta.json': body }), 'b.dump').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SidecarFormatError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain('"b.dump"');
  });

  it('passes an access failure through instead of reporting no sidecar', async () => {
    await expect(readSidecarObject(storageWith({ 'c.dump.meta.json': 'broken' }), 'c.dump')).rejects.toMatchObject({ code: 'TRANSIENT' });
  });

  it('tells sidecars from backups', () => {
    expect(isSidecarKey('x.dump.gz.meta.json')).toBe(true);
    expect(isSidecarKey('x.tar.index.json')).toBe(true);
    expect(isSidecarKey('x.dump.gz')).toBe(false);
  });
});
