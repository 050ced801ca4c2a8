import { mkdtemp, rm, writeFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tar from 'tar-stream';
import { TarOutput } from '../src/internal/tar-output.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ArchiveEntry } from '../src/internal/walk.js';
import { WarningList } from '../src/internal/warnings.js';

// A file that shrinks between its stat and its read is padded to the size in its header. The read buffers are not
// zero-filled up front, so this checks that the padding is zeros and never whatever the buffer held before.
const reads = vi.hoisted(() => ({ limit: Infinity }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    open: async (...args: Parameters<typeof actual.open>) => {
      const handle = await actual.open(...args);
      const read = handle.read.bind(handle) as (buffer: Buffer, offset: number, length: number, position: number) => Promise<{ bytesRead: number; buffer: Buffer }>;
      return Object.assign(handle, {
        read: async (buffer: Buffer, offset: number, length: number, position: number) => {
          // Dirty the buffer first, as a reused allocation would be, then read only what is left before the cut.
          buffer.fill(0xaa, offset, offset + length);
          const allowed = Math.max(0, Math.min(length, reads.limit - position));
          if (allowed === 0) return { bytesRead: 0, buffer };
          return read(buffer, offset, allowed, position);
        },
      });
    },
  };
});

const { writeArchive } = await import('../src/internal/pack.js');

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  reads.limit = Infinity;
});

async function packOne(path: string, warnings: WarningList): Promise<Buffer> {
  const out = new TarOutput(new AbortController().signal);
  const entry: ArchiveEntry = { kind: 'file', member: 'data.bin', absolute: path, stats: await stat(path) };
  async function* entries() {
    yield entry;
  }
  const written = writeArchive(out, entries(), { maxOpenFiles: 2, followSymlinks: false, warnings, signal: new AbortController().signal }).then(() => out.finish());
  const extract = tar.extract();
  const content = new Promise<Buffer>((resolve, reject) => {
    extract.on('entry', (_header, stream, next) => {
      const pieces: Buffer[] = [];
      stream.on('data', (piece: Buffer) => pieces.push(piece));
      stream.on('end', () => {
        resolve(Buffer.concat(pieces));
        next();
      });
    });
    extract.on('error', reject);
  });
  out.stream.pipe(extract);
  await written;
  return content;
}

describe('tar packing of a file that shrinks while it is read', () => {
  it('pads the missing tail with zeros and warns', async () => {
    dir = await mkdtemp(join(tmpdir(), 'hf-pack-'));
    const path = join(dir, 'data.bin');
    const original = Buffer.alloc(600 * 1024, 7);
    await writeFile(path, original);
    reads.limit = 100 * 1024; // the file "shrinks" to 100 KiB after its stat
    const warnings = new WarningList();
    const stored = await packOne(path, warnings);
    expect(stored.length).toBe(original.length);
    expect(stored.subarray(0, 100 * 1024).equals(original.subarray(0, 100 * 1024))).toBe(true);
    expect(stored.subarray(100 * 1024).every((byte) => byte === 0)).toBe(true);
    expect(warnings.list().join('\n')).toContain('shrank while it was read');
  });

  it('stores an unchanged file byte for byte', async () => {
    dir = await mkdtemp(join(tmpdir(), 'hf-pack-'));
    const path = join(dir, 'data.bin');
    const original = Buffer.from(Array.from({ length: 700 * 1024 }, (_, index) => index % 251));
    await writeFile(path, original);
    const stored = await packOne(path, new WarningList());
    expect(stored.equals(original)).toBe(true);
  });
});
