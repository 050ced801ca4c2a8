import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { ArchiveFormatError, ArchiveIntegrityError, decodeIndexFile, readIndex, resolveSnapshot, type ArchiveIndex, type IndexEntry } from '../src/index.js';
import { encodeIndexFile, indexFileBytes } from '../src/format/index-file.js';
import { decodeIndexStream } from '../src/format/index-stream.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

function entry(index: number, extra: Partial<IndexEntry> = {}): IndexEntry {
  return {
    path: `folder ${index % 7}/fïle-${index}-名前.txt`,
    kind: 'file',
    mode: 0o644,
    uid: 1000,
    gid: 1000,
    mtime: `1700000${index}.123456789`,
    size: index * 3,
    compression: 'zstd',
    offset: index * 1536,
    length: 1536,
    sha256: sha(String(index)),
    ...extra,
  };
}

function index(count: number, extra: Partial<ArchiveIndex> = {}): ArchiveIndex {
  return {
    format: 'holdfast-archive-index',
    version: 1,
    archiveName: 'run-0.hfa',
    createdAt: '2026-11-25T10:00:00.000Z',
    chain: null,
    entries: Array.from({ length: count }, (_, position) => entry(position)),
    deletions: [],
    renames: [],
    ...extra,
  };
}

/** The encoding the format documents: checksum line, then JSON.stringify of the whole index. */
function reference(value: ArchiveIndex): Buffer {
  const json = JSON.stringify(value);
  return Buffer.concat([Buffer.from(`HOLDFAST-INDEX 1 sha256=${sha(json)}\n`), Buffer.from(json)]);
}

describe('index file encoding', () => {
  it('writes exactly the bytes of JSON.stringify, in pieces, for small and large indexes', () => {
    for (const value of [
      index(0),
      index(1),
      // Several output pieces (about 64 K characters each), unicode names, and the optional fields in any mix.
      index(3000, { chain: { id: 'chain-1', sequence: 2, baseArchives: ['run-0.hfa', 'run-1.hfa'] }, deletions: ['gone', 'ünïcode'], renames: [{ from: 'a', to: 'b' }] }),
      { ...index(2), archiveName: undefined } as unknown as ArchiveIndex,
    ]) {
      expect(encodeIndexFile(value).equals(reference(value))).toBe(true);
    }
  });

  it('produces the same bytes in pieces on every reading, without one buffer of the whole file', () => {
    const value = index(3000, { deletions: ['gone'], renames: [{ from: 'a', to: 'ü' }] });
    const file = indexFileBytes(value);
    const first = [...file.chunks()];
    expect(first.length).toBeGreaterThan(5);
    expect(Math.max(...first.map((piece) => piece.length))).toBeLessThan(80 * 1024);
    expect(Buffer.concat(first).equals(reference(value))).toBe(true);
    expect(file.length).toBe(reference(value).length);
    expect(Buffer.concat([...file.chunks()]).equals(reference(value))).toBe(true);
  });

  it('fails a reading whose index changed since it was measured, instead of writing a file its checksum rejects', () => {
    const value = index(10);
    const file = indexFileBytes(value);
    (value.entries[4] as { size: number }).size = 999;
    expect(() => [...file.chunks()]).toThrow(/the index changed while it was written/);
  });

  it('reads back what it wrote, keys in the schema order, so a second encoding is identical', () => {
    const value = index(2500, { deletions: ['x'], renames: [{ from: 'p', to: 'q' }] });
    const file = encodeIndexFile(value);
    const decoded = decodeIndexFile(file);
    expect(decoded).toEqual(value);
    expect(Object.keys(decoded)).toEqual(Object.keys(value));
    expect(encodeIndexFile(decoded).equals(file)).toBe(true);
  });

  it('names the entry and field that do not match the format', () => {
    const bad = index(5);
    (bad.entries[3] as { mode: number }).mode = -1;
    expect(() => decodeIndexFile(reference(bad))).toThrow(ArchiveFormatError);
    expect(() => decodeIndexFile(reference(bad))).toThrow(/at entries\.3\.mode/);
    const noEntries = { ...index(0), entries: 'none' } as unknown as ArchiveIndex;
    expect(() => decodeIndexFile(reference(noEntries))).toThrow(/at entries/);
    const badHead = { ...index(1), version: 2 } as unknown as ArchiveIndex;
    expect(() => decodeIndexFile(reference(badHead))).toThrow(/at version/);
  });
});

/** The file cut into pieces of `size` bytes, so UTF-8 characters, tokens and the checksum line split across chunks. */
function* pieces(file: Buffer, size: number): Generator<Buffer> {
  for (let start = 0; start < file.length; start += size) yield file.subarray(start, start + size);
}
const tooLarge = () => new RangeError('too large');
const decodeStream = (file: Buffer, size: number, limit = Infinity) => decodeIndexStream(pieces(file, size), limit, tooLarge);

describe('index file decoding as a stream', () => {
  it('gives what the whole-file decode gives, whatever the chunk boundaries', async () => {
    const value = index(1200, { chain: { id: 'c', sequence: 1, baseArchives: ['run-0.hfa'] }, deletions: ['gone/ünï'], renames: [{ from: 'p', to: 'q' }] });
    const file = encodeIndexFile(value);
    for (const size of [1, 7, 65, 4096, 65536, file.length]) {
      const decoded = await decodeStream(file, size);
      expect(decoded).toEqual(decodeIndexFile(file));
      expect(Object.keys(decoded)).toEqual(Object.keys(value));
      expect(encodeIndexFile(decoded).equals(file)).toBe(true);
    }
    expect((await decodeStream(encodeIndexFile(index(0)), 3)).entries).toEqual([]);
  });

  it('reports a changed or cut index as a checksum mismatch, even where the change breaks the JSON', async () => {
    const file = encodeIndexFile(index(50));
    const flipped = Buffer.from(file);
    flipped.writeUInt8(flipped.readUInt8(flipped.length - 40) ^ 0x01, flipped.length - 40);
    await expect(decodeStream(flipped, 100)).rejects.toThrow(ArchiveIntegrityError);
    const broken = Buffer.from(file);
    broken[200] = 0x7b; // a '{' in the middle of an entry: the JSON no longer parses
    await expect(decodeStream(broken, 100)).rejects.toThrow(/checksum mismatch/);
    await expect(decodeStream(file.subarray(0, file.length - 10), 100)).rejects.toThrow(ArchiveIntegrityError);
  });

  it('names the entry and field that do not match, and refuses what is not an index document', async () => {
    const bad = index(5);
    (bad.entries[3] as { mode: number }).mode = -1;
    await expect(decodeStream(reference(bad), 33)).rejects.toThrow(/at entries\.3\.mode/);
    await expect(decodeStream(reference({ ...index(0), entries: 'none' } as unknown as ArchiveIndex), 33)).rejects.toThrow(/at entries/);
    await expect(decodeStream(reference({ ...index(1), version: 2 } as unknown as ArchiveIndex), 33)).rejects.toThrow(/at version/);
    const withChecksum = (json: string) => Buffer.concat([Buffer.from(`HOLDFAST-INDEX 1 sha256=${sha(json)}\n`), Buffer.from(json)]);
    await expect(decodeStream(withChecksum('{"format":'), 4)).rejects.toThrow(/does not parse/);
    await expect(decodeStream(withChecksum(`${JSON.stringify(index(1))}  x`), 4)).rejects.toThrow(/after the end/);
    expect((await decodeStream(withChecksum(`${JSON.stringify(index(1))} \n`), 4)).entries).toHaveLength(1);
    await expect(decodeStream(withChecksum('[1,2]'), 4)).rejects.toThrow(ArchiveFormatError);
    await expect(decodeStream(Buffer.from('HOLDFAST-INDEX 2 sha256='), 4)).rejects.toThrow(/does not start with/);
    await expect(decodeStream(Buffer.alloc(0), 4)).rejects.toThrow(/does not start with/);
  });

  it('a "__proto__" key in an entry stays an own property and fails validation instead of changing the prototype', async () => {
    const json = JSON.stringify(index(1)).replace('"kind":"file"', '"kind":"file","__proto__":{"archive":"elsewhere"}');
    const file = Buffer.concat([Buffer.from(`HOLDFAST-INDEX 1 sha256=${sha(json)}\n`), Buffer.from(json)]);
    const decoded = await decodeStream(file, 64);
    expect(decoded.entries[0]?.archive).toBeUndefined();
    expect(Object.getPrototypeOf(decoded.entries[0])).toBe(Object.prototype);
  });

  it('stops reading past the size limit', async () => {
    const file = encodeIndexFile(index(200));
    await expect(decodeStream(file, 1000, file.length - 1)).rejects.toThrow('too large');
    expect((await decodeStream(file, 1000, file.length)).entries).toHaveLength(200);
  });

  it('readIndex decodes a sidecar stream as it arrives, and collects a sealed one for the unseal hook', async () => {
    const file = encodeIndexFile(index(300));
    expect(await readIndex({ sidecar: Readable.from(pieces(file, 999)) })).toEqual(decodeIndexFile(file));
    const sealed = Buffer.from(file.toString('base64'));
    const unsealIndex = (bytes: Buffer) => Buffer.from(bytes.toString(), 'base64');
    expect(await readIndex({ sidecar: Readable.from(pieces(sealed, 10)) }, { unsealIndex })).toEqual(decodeIndexFile(file));
    await expect(readIndex({ sidecar: Readable.from(pieces(sealed, 10)) })).rejects.toThrow(/sealed\?/);
    await expect(readIndex({ sidecar: Readable.from(pieces(file, 999)) }, { maxIndexBytes: 1000 })).rejects.toThrow(/larger than maxIndexBytes/);
  });
});

describe('resolving without copies', () => {
  it('fills in the archive of each entry and resolves the same indexes again', () => {
    const full = index(3, { chain: { id: 'c', sequence: 0, baseArchives: [] } });
    const unchanged = { ...full.entries[0]!, archive: 'run-0.hfa' };
    const incremental = index(0, {
      archiveName: 'run-1.hfa',
      chain: { id: 'c', sequence: 1, baseArchives: ['run-0.hfa'] },
      entries: [unchanged, entry(1, { offset: 0 }), entry(2, { offset: 1536 })],
    });
    const copied = resolveSnapshot([full]);
    expect(full.entries[0]?.archive).toBeUndefined();
    expect(copied.entries[0]).not.toBe(full.entries[0]);
    const first = resolveSnapshot([full], { reuseEntries: true });
    expect(first.entries[0]).toBe(full.entries[0]);
    expect(first.entries.map((resolved) => resolved.archive)).toEqual(['run-0.hfa', 'run-0.hfa', 'run-0.hfa']);
    // The full backup's entries now name their own archive: the chain still resolves with them.
    const second = resolveSnapshot([full, incremental], { reuseEntries: true });
    expect(second.entries.map((resolved) => resolved.archive)).toEqual(['run-0.hfa', 'run-1.hfa', 'run-1.hfa']);
    expect(second.requiredArchives).toEqual(['run-0.hfa', 'run-1.hfa']);
    expect(resolveSnapshot([incremental, full]).entries.map((resolved) => resolved.archive)).toEqual(['run-0.hfa', 'run-1.hfa', 'run-1.hfa']);
  });
});
