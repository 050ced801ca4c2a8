import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ArchiveFormatError, decodeIndexFile, resolveSnapshot, type ArchiveIndex, type IndexEntry } from '../src/index.js';
import { encodeIndexFile } from '../src/format/index-file.js';

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
