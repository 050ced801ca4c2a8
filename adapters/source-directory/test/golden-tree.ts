import { createHash } from 'node:crypto';
import { chmod, lutimes, mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

// A tree that is the same on every machine (names, bytes, modes, times), so the tar the directory source writes of it
// can be compared byte for byte with one written by an earlier build (docs/formats: the tar layout must not drift
// when the reading code is made faster). Only the owner differs between machines: see `normalizeOwners`.

/** mulberry32: a tiny seeded generator, so the tree needs no fixture of its own. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['holdfast', 'backup', 'restore', 'archive', 'zstd', 'tar', 'folder', 'file', 'bytes', 'small', 'the', 'a', '\n'];

/** Text-like bytes (so the committed fixture archive compresses well), `size` long, from `random`. */
function contentOf(size: number, random: () => number): Buffer {
  const content = Buffer.alloc(size);
  let at = 0;
  while (at < size) {
    const word = WORDS[Math.floor(random() * WORDS.length)]!;
    at += content.write(`${word} `, at);
  }
  return content;
}

// Sizes that matter to the reader: empty, around a tar block, around the small-file limit (64 KiB), larger.
const EDGE_SIZES = [0, 1, 511, 512, 513, 1024, 4095, 4096, 65_535, 65_536, 65_537, 300_000];
const FILE_MODES = [0o644, 0o600, 0o755, 0o640, 0o444];
// Names a tar writer must get right: spaces, unicode (PAX), a name over 100 bytes, dots, dashes, a leading dot.
const ODD_NAMES = ['with space.txt', 'naïve-東京.md', `${'long-name-'.repeat(11)}end.bin`, '.hidden', '-dash', 'a.b.c', 'UPPER', 'üñí çødé'];
const BASE_TIME = 1_700_000_000;

/**
 * Writes the golden tree below `root` (created here; it must not exist): 5 levels of folders, an empty folder, 250
 * files of 0-24 KiB plus the edge sizes, odd names, symlinks (relative to a file, to a folder, with a unicode target,
 * dangling) and fixed modes and times on everything, folders last so creating their content does not move their time.
 */
export async function writeGoldenTree(root: string): Promise<void> {
  const random = generator(42);
  const folders: string[] = [root];
  const made: { path: string; mode: number; time: number }[] = [];
  await mkdir(root);
  for (let depth = 1; depth <= 5; depth++) {
    const parent = folders[folders.length - 1]!;
    for (const name of [`level-${depth}`, `sibling ${depth}`]) {
      const folder = join(parent, name);
      await mkdir(folder);
      folders.push(folder);
    }
  }
  await mkdir(join(root, 'empty folder'));
  folders.push(join(root, 'empty folder'));
  let index = 0;
  const addFile = async (folder: string, name: string, size: number) => {
    const path = join(folder, name);
    await writeFile(path, contentOf(size, random));
    const mode = FILE_MODES[index % FILE_MODES.length]!;
    await chmod(path, mode);
    made.push({ path, mode, time: BASE_TIME + index * 97 });
    index += 1;
  };
  for (let count = 0; count < 250; count++) {
    const folder = folders[Math.floor(random() * (folders.length - 1))]!;
    await addFile(folder, `file-${String(count).padStart(3, '0')}.dat`, Math.floor(random() * 24 * 1024));
  }
  for (const [at, size] of EDGE_SIZES.entries()) await addFile(folders[at % folders.length]!, `edge-${size}.bin`, size);
  for (const [at, name] of ODD_NAMES.entries()) await addFile(folders[at % 3]!, name, 100 + at * 37);
  for (const { path, mode, time } of made) {
    // A read-only file keeps its bytes; times are set after the mode (utimes needs no write permission for the owner).
    await utimes(path, new Date(time * 1000 + 123), new Date(time * 1000 + 456));
    await chmod(path, mode);
  }
  const links: [string, string][] = [
    ['link-to-file', 'level-1/sibling 2/../edge-0.bin'],
    ['link-to-folder', 'level-1'],
    ['link-unicode', 'naïve-東京.md'],
    ['link-dangling', 'no such file'],
  ];
  for (const [at, [name, target]] of links.entries()) {
    await symlink(target, join(root, name));
    await lutimes(join(root, name), BASE_TIME - at, BASE_TIME - at);
  }
  for (const [at, folder] of [...folders.entries()].reverse()) {
    await chmod(folder, at % 2 === 0 ? 0o755 : 0o750);
    await utimes(folder, BASE_TIME + 50_000 + at, BASE_TIME + 50_000 + at);
  }
}

function octalField(block: Buffer, offset: number, length: number): number {
  return parseInt(block.toString('ascii', offset, offset + length).replace(/[\0 ]+$/, '') || '0', 8);
}

function sizeField(block: Buffer): number {
  // Base-256 (the high bit set) for sizes past 8 GiB; never in the golden tree, so refused rather than guessed.
  if ((block[124]! & 0x80) !== 0) throw new Error('base-256 size in the golden archive');
  return octalField(block, 124, 12);
}

/**
 * The archive with every header's uid and gid set to 0 (and its checksum recomputed), after checking they were the
 * current process's: the only bytes that depend on who runs the test. Throws on anything but a well-formed tar.
 */
export function normalizeOwners(archive: Buffer, uid: number, gid: number): Buffer {
  const out = Buffer.from(archive);
  let offset = 0;
  for (;;) {
    if (offset + 512 > out.length) throw new Error(`the archive ends inside a header at ${offset}`);
    const block = out.subarray(offset, offset + 512);
    if (block.every((byte) => byte === 0)) return out;
    if (block.toString('ascii', 257, 262) !== 'ustar') throw new Error(`no ustar header at ${offset}`);
    const owners = [octalField(block, 108, 8), octalField(block, 116, 8)];
    if (owners[0] !== uid || owners[1] !== gid) throw new Error(`header at ${offset} has owner ${owners.join(':')}, not ${uid}:${gid}`);
    block.write('000000 \0', 108, 'ascii');
    block.write('000000 \0', 116, 'ascii');
    block.fill(0x20, 148, 156);
    let sum = 0;
    for (const byte of block) sum += byte;
    block.write(`${sum.toString(8).padStart(6, '0')} \0`, 148, 'ascii');
    offset += 512 + Math.ceil(sizeField(block) / 512) * 512;
  }
}

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
