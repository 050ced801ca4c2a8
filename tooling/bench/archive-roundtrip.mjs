// Seekable archive round trip of issue 20, acceptance 1 (`node tooling/bench/archive-roundtrip.mjs`; build first with
// `node tooling/scripts/build-fast.mjs`; not part of `npm test`). Generates a directory tree (small files of varied
// sizes, symlinks, hard links, empty folders, unicode, odd and long names, varied modes, nanosecond mtimes, one sparse
// file), backs it up as a SEEKABLE archive in one child process (holdfast-run.mjs with the server's Node flags: the
// real stack on libsql, a fresh data directory), restores it into a fresh folder in a second child, and compares the
// two trees: type, mode, size, mtime to the microsecond, SHA-256 of every file (streamed, the sparse file too),
// symlink targets, hard link groups, and that the sparse file is still sparse. Prints the report as JSON on stdout and
// a short table on stderr, writes it to tooling/bench/results/, and exits 1 when the trees differ or a child's peak
// RSS (VmHWM) is 200 MiB or more.
//   HOLDFAST_BENCH_ARCHIVE_FILES    small files (default 50000); symlinks, hard links and empty folders scale with it
//   HOLDFAST_BENCH_SPARSE_GB        apparent size of the sparse file in GiB (default 9; 0: none)
//   HOLDFAST_BENCH_ARCHIVE_CODEC    ZSTD (default), GZIP or NONE
//   HOLDFAST_BENCH_ARCHIVE_ENCRYPT  1 (default): an encryption profile on the job; 0: plain archive
//   HOLDFAST_BENCH_ARCHIVE_SEED     seed of the tree's shape, names, sizes, modes and times (default 20)
//   HOLDFAST_BENCH_MEMORY_SAMPLE_MS the children's memory timeline interval (default 250; 0: off)
//   HOLDFAST_BENCH_TIMEOUT_S        per child (default 3600)
//   HOLDFAST_BENCH_ARCHIVE_KEEP     1: keep the temp folder at the end (to inspect it or rerun a child); default 0
// Everything lives in one temp folder (source, data directories, storage, restore), removed at the end, on failure
// and on SIGINT/SIGTERM (kept at the end with HOLDFAST_BENCH_ARCHIVE_KEEP=1).
import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpus, totalmem, tmpdir } from 'node:os';
import { appendFile, chmod, link, lstat, mkdir, mkdtemp, open, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SERVER_ENV, SERVER_NODE_FLAGS } from './lib/server-node-flags.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const env = process.env;
const fileCount = Number(env.HOLDFAST_BENCH_ARCHIVE_FILES ?? 50_000);
const sparseGiB = Number(env.HOLDFAST_BENCH_SPARSE_GB ?? 9);
const codec = (env.HOLDFAST_BENCH_ARCHIVE_CODEC ?? 'ZSTD').toUpperCase();
const isEncrypted = (env.HOLDFAST_BENCH_ARCHIVE_ENCRYPT ?? '1') !== '0';
const seed = Number(env.HOLDFAST_BENCH_ARCHIVE_SEED ?? 20);
const memorySampleMs = Number(env.HOLDFAST_BENCH_MEMORY_SAMPLE_MS ?? 250);
const timeoutSeconds = Number(env.HOLDFAST_BENCH_TIMEOUT_S ?? 3600);
const isKept = env.HOLDFAST_BENCH_ARCHIVE_KEEP === '1';
if (!(fileCount >= 100) || !(sparseGiB >= 0) || !['ZSTD', 'GZIP', 'NONE'].includes(codec)) {
  throw new Error('HOLDFAST_BENCH_ARCHIVE_FILES must be >= 100, HOLDFAST_BENCH_SPARSE_GB >= 0, HOLDFAST_BENCH_ARCHIVE_CODEC one of ZSTD, GZIP, NONE');
}
const RSS_LIMIT_KIB = 200 * 1024;
const MiB = 1024 * 1024;
const run = promisify(execFile);
const log = (message) => process.stderr.write(`[roundtrip] ${new Date().toISOString().slice(11, 19)} ${message}\n`);
const loadAverage = async () => Number((await readFile('/proc/loadavg', 'utf8')).split(' ')[0]);

/** mulberry32: a small seeded generator, so the same seed gives the same tree shape. */
function seeded(value) {
  let state = value >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = seeded(seed);
const pick = (list) => list[Math.floor(random() * list.length)];

/** Runs `task(item)` over `items` with at most `limit` at once. */
async function eachLimit(items, limit, task) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

// Modes with the special bits too (the run is root's or the owner's, so even 0o000 files are readable to root).
const FILE_MODES = [0o644, 0o600, 0o640, 0o664, 0o755, 0o700, 0o444, 0o400, 0o604, 0o777, 0o4755, 0o2755, 0o1644, ...(process.getuid?.() === 0 ? [0o000] : [])];
const DIR_MODES = [0o755, 0o750, 0o700, 0o775, 0o555, 0o1777, 0o2775, 0o711];
// Sub-second parts of every shape: random nanoseconds, whole microseconds, whole seconds, a few nanoseconds past a
// microsecond; plus the epoch, before it, and after 2106 (beyond 32-bit seconds).
const TIMES = [
  ...Array.from({ length: 400 }, (_, index) => {
    const seconds = 1_000_000_000 + Math.floor(random() * 760_000_000);
    const microseconds = Math.floor(random() * 1e6);
    const nanoseconds = [Math.floor(random() * 1e9), microseconds * 1000, 0, microseconds * 1000 + Math.floor(random() * 200)][index % 4];
    return `${seconds}.${String(nanoseconds).padStart(9, '0')}`;
  }),
  '0',
  '-86399.25',
  '7258118400.999999999',
  '1700000000.000000001',
];

function folderName(index) {
  if (index % 9 === 0) return `папка-${index}`;
  if (index % 9 === 3) return `目录 ${index}`;
  if (index % 9 === 6) return `Ördner ñ ${index} 😀`;
  return `dir-${index}`;
}

function fileName(index) {
  if (index % 997 === 1) return `long-${index}-`.padEnd(255, 'x');
  if (index % 997 === 2) return `${index}-`.padEnd(15, '_') + 'ж'.repeat(120); // 255 bytes
  switch (index % 20) {
    case 0:
      return `файл-${index}.txt`;
    case 5:
      return `ファイル ${index}.dat`;
    case 10:
      return `e\u0301te-${index}.log`; // NFD: the name must come back in the same normal form
    case 12:
      return `\u00e9te-${index}.log`;
    case 15:
      return `emoji-😀🚀-${index}.bin`;
    default:
      return `file-${index}.${['txt', 'bin', 'log', 'json', 'dat'][index % 5]}`;
  }
}

const ODD_NAMES = [' leading space', 'trailing space ', '-dash', 'new\nline', 'tab\there', 'back\\slash', `quote"'`, '#hash%percent&amp;', '*star?', 'dot.', '..dots', '...', 'x'.repeat(100), 'y'.repeat(101), 'z'.repeat(255), 'ж'.repeat(127), '😀'.repeat(63)];
const EDGE_SIZES = [0, 1, 511, 512, 513, 4095, 4096, 65535, 65536, 65537, MiB - 1, MiB, MiB + 1, 3 * MiB + 17];
const LONG_CHAIN = ['long-names', 'ä'.repeat(120), 'b'.repeat(250), '日本語'.repeat(26), 'deep'];

// Log-like text, sliced at random offsets: compressible, never the same slice twice in a row.
const TEXT = Buffer.from(
  Array.from(
    { length: 16_000 },
    (_, line) => `2026-11-${String(1 + (line % 28)).padStart(2, '0')} 12:${String(line % 60).padStart(2, '0')}:07.${line % 1000} INFO worker-${line % 7} request ${Math.floor(random() * 1e9)} took ${line % 997} ms path=/api/items/${line * 31}\n`,
  ).join(''),
);

function content(index, size) {
  switch (index % 10) {
    case 0:
    case 1:
    case 2:
    case 3:
      return randomBytes(size);
    case 8:
      return Buffer.alloc(size);
    case 9:
      return Buffer.alloc(size, index % 251);
    default: {
      const start = Math.floor(random() * (TEXT.length - 65_536));
      return TEXT.subarray(start, start + size);
    }
  }
}

/** Builds the tree under `root`; answers what it holds. mtimes are set last with `touch -d`, which keeps nanoseconds. */
async function generateTree(root, { files, sparseBytes }) {
  const made = { files: 0, fileBytes: 0, directories: 0, emptyDirectories: 0, symlinks: 0, hardlinkPaths: 0, oddNames: ODD_NAMES.length, sparsePath: null };
  const directoryModes = new Map([['', 0o755]]);
  const timed = new Map(); // time -> paths (non-directories; one path per inode)
  const timeFor = (path, time = pick(TIMES)) => (timed.get(time) ?? timed.set(time, []).get(time)).push(path);
  const folders = [''];
  for (let index = 1; index <= Math.max(1, Math.ceil(files / 50)); index += 1) folders.push(join(folders[Math.floor((index - 1) / 8)], folderName(index)));
  const chain = LONG_CHAIN.map((_, depth) => join(...LONG_CHAIN.slice(0, depth + 1)));
  for (const folder of [...folders, 'odd names', 'edge-sizes', 'sparse', ...chain]) {
    await mkdir(join(root, folder), { recursive: true });
    if (folder !== '') directoryModes.set(folder, folder === 'sparse' || chain.includes(folder) ? 0o755 : pick(DIR_MODES));
  }
  const filesByFolder = new Map(folders.map((folder) => [folder, []]));
  const plain = [];
  for (let index = 0; index < files; index += 1) {
    const folder = folders[index % folders.length];
    const size = index % 50 === 7 ? 65_536 : Math.floor(65_536 * random() ** 2);
    plain.push({ path: join(folder, fileName(index)), index, size, mode: pick(FILE_MODES) });
    filesByFolder.get(folder).push(fileName(index));
  }
  // The edge files also carry the edge times (epoch, before it, after 2106, one nanosecond past a second).
  EDGE_SIZES.forEach((size, index) => plain.push({ path: join('edge-sizes', `size-${size}`), index: index * 10, size, mode: 0o644, time: TIMES.at(-1 - index) }));
  plain.push({ path: join('edge-sizes', 'zeros-2MiB'), index: 8, size: 2 * MiB, mode: 0o644 });
  ODD_NAMES.forEach((name, index) => plain.push({ path: join('odd names', name), index, size: 100 + index, mode: 0o644 }));
  ['short.txt', 'n'.repeat(255), `${'ü'.repeat(127)}.`].forEach((name, index) => plain.push({ path: join(chain.at(-1), name), index, size: 4096 + index, mode: 0o640 }));
  await eachLimit(plain, 16, async (file) => {
    const absolute = join(root, file.path);
    const body = content(file.index, file.size);
    await writeFile(absolute, body);
    await chmod(absolute, file.mode);
    made.fileBytes += body.length;
  });
  made.files = plain.length;
  plain.forEach((file) => timeFor(file.path, file.time));

  // Hard links: pairs across folders, every 40th a group of three.
  const linkCount = Math.max(2, Math.round(files / 250));
  for (let group = 0; group < linkCount; group += 1) {
    const target = plain[(group * 7919 + 13) % files];
    const names = group % 40 === 0 ? [`hardlink-${group}-a`, `hardlink-${group}-b ü日`] : [`hardlink-${group}${group % 3 === 0 ? '-ü日' : ''}`];
    for (const name of names) {
      await link(join(root, target.path), join(root, folders[(group * 13 + 5) % folders.length], name));
      made.hardlinkPaths += 1;
    }
  }

  // Symlinks: relative (same folder, another folder, a folder), absolute (inside and outside the tree), dangling,
  // long unicode targets, one loop.
  const symlinkCount = Math.max(9, Math.round(files / 250));
  for (let number = 0; number < symlinkCount; number += 1) {
    const folder = folders[(number * 31) % folders.length];
    const other = plain[(number * 104_729 + 7) % files];
    const name = `symlink-${number}${number % 5 === 0 ? '-→ünï' : ''}`;
    const targets = [
      filesByFolder.get(folder)[0] ?? 'missing-same-folder',
      relative(join(root, folder), join(root, other.path)),
      join(root, other.path),
      '/etc/hostname',
      `missing-${number}/nothing.txt`,
      `/nonexistent-holdfast-bench/${number}`,
      relative(join(root, folder), join(root, folders[(number + 1) % folders.length])) || '.',
      `../${'ü'.repeat(120)}/${number}`,
      number === 8 ? name : `./${filesByFolder.get(folder)[1] ?? 'missing'}`,
    ];
    await symlink(targets[number % targets.length], join(root, folder, name));
    timeFor(join(folder, name));
    made.symlinks += 1;
  }

  const emptyCount = Math.max(2, Math.round(files / 500));
  for (let number = 0; number < emptyCount; number += 1) {
    const path = join(folders[(number * 17) % folders.length], `empty-${number}${number % 4 === 0 ? ' 空' : ''}`);
    await mkdir(join(root, path));
    directoryModes.set(path, DIR_MODES[number % DIR_MODES.length]);
    made.emptyDirectories += 1;
  }

  if (sparseBytes > 0) {
    const path = join('sparse', `huge-${sparseGiB}g.img`);
    await run('truncate', ['-s', String(sparseBytes), join(root, path)]);
    const handle = await open(join(root, path), 'r+');
    try {
      const pieces = [
        [0, MiB],
        [Math.floor(sparseBytes * 0.11) + 12_345, 2 * MiB],
        [Math.floor(sparseBytes / 2) + 777, MiB],
        [sparseBytes - MiB - 3, MiB],
      ];
      for (const [position, length] of pieces) await handle.write(randomBytes(length), 0, length, position);
    } finally {
      await handle.close();
    }
    await chmod(join(root, path), 0o640);
    timeFor(path);
    made.sparsePath = path;
  }

  for (const [path, mode] of directoryModes) await chmod(join(root, path), mode);
  made.directories = directoryModes.size;
  // `touch -h` sets a symlink's own time; directory times go last, as creating entries changes them.
  const touch = async (time, paths) => {
    for (let start = 0; start < paths.length; start += 200) await run('touch', ['-h', '-d', `@${time}`, '--', ...paths.slice(start, start + 200).map((path) => join(root, path))]);
  };
  await eachLimit([...timed], 2, ([time, paths]) => touch(time, paths));
  await eachLimit([...directoryModes.keys()], 4, (path) => touch(pick(TIMES), [path]));
  return made;
}

/** Streams a file through SHA-256 with the caller's buffer. */
async function hashFile(path, buffer) {
  const handle = await open(path, 'r');
  const hash = createHash('sha256');
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

/** Every entry under `root` by relative path ('.' is the root): type, mode, times, size, blocks, links, hashes. */
async function describeTree(root) {
  const entries = new Map();
  const visit = async (absolute, path) => {
    const info = await lstat(absolute, { bigint: true });
    const type = info.isSymbolicLink() ? 'symlink' : info.isDirectory() ? 'directory' : info.isFile() ? 'file' : 'other';
    const entry = { type, mode: Number(info.mode & 0o7777n), mtimeNs: info.mtimeNs, ino: info.ino, nlink: Number(info.nlink), size: Number(info.size), blocks: Number(info.blocks) };
    if (type === 'symlink') entry.target = await readlink(absolute);
    entries.set(path, entry);
    if (type === 'directory') for (const name of (await readdir(absolute)).sort()) await visit(join(absolute, name), path === '.' ? name : `${path}/${name}`);
  };
  await visit(root, '.');
  const files = [...entries].filter(([, entry]) => entry.type === 'file');
  const hashes = new Map();
  const buffers = [];
  await eachLimit(files, 4, async ([path, entry]) => {
    const buffer = buffers.pop() ?? Buffer.allocUnsafe(MiB);
    try {
      if (!hashes.has(entry.ino)) hashes.set(entry.ino, hashFile(join(root, path), buffer));
      entry.sha256 = await hashes.get(entry.ino);
    } finally {
      buffers.push(buffer);
    }
  });
  // Hard link group of a path: every path of the tree on the same inode, so grouping is compared by paths.
  const byInode = new Map();
  for (const [path, entry] of files) if (entry.nlink > 1) (byInode.get(entry.ino) ?? byInode.set(entry.ino, []).get(entry.ino)).push(path);
  for (const paths of byInode.values()) for (const path of paths) entries.get(path).linkGroup = paths.join(' | ');
  return entries;
}

const octal = (mode) => `0${mode.toString(8)}`;

/** Differences between the two trees, one object per path and field. */
function compareTrees(source, restored, sparsePath) {
  const differences = [];
  const differ = (path, field, expected, actual, extra = {}) => differences.push({ path, field, source: expected, restored: actual, ...extra });
  for (const [path, want] of source) {
    const got = restored.get(path);
    if (!got) {
      differ(path, 'missing', want.type, null);
      continue;
    }
    if (want.type !== got.type) {
      differ(path, 'type', want.type, got.type);
      continue;
    }
    if (want.mode !== got.mode) differ(path, 'mode', octal(want.mode), octal(got.mode));
    // utimes keeps microseconds: the same microsecond is identical, anything else is a difference.
    if (want.mtimeNs / 1000n !== got.mtimeNs / 1000n) differ(path, 'mtime', String(want.mtimeNs), String(got.mtimeNs), { deltaNs: Number(got.mtimeNs - want.mtimeNs) });
    if (want.type === 'symlink' && want.target !== got.target) differ(path, 'symlink target', want.target, got.target);
    if (want.type === 'file') {
      if (want.size !== got.size) differ(path, 'size', want.size, got.size);
      if (want.sha256 !== got.sha256) differ(path, 'sha256', want.sha256, got.sha256);
      if ((want.linkGroup ?? null) !== (got.linkGroup ?? null)) differ(path, 'hard link group', want.linkGroup ?? null, got.linkGroup ?? null);
    }
  }
  for (const [path, got] of restored) if (!source.has(path)) differ(path, 'extra', null, got.type);
  let sparse = null;
  if (sparsePath) {
    const want = source.get(sparsePath);
    const got = restored.get(sparsePath);
    sparse = { path: sparsePath, size: want.size, sourceAllocatedBytes: want.blocks * 512, restoredAllocatedBytes: got ? got.blocks * 512 : null };
    // Still sparse: allocated blocks far below the size (under 1 %; the data written is about 5 MiB).
    sparse.isSparse = got !== undefined && got.blocks * 512 < want.size / 100;
    if (!sparse.isSparse) differ(sparsePath, 'sparse', `${sparse.sourceAllocatedBytes} bytes allocated`, `${sparse.restoredAllocatedBytes} bytes allocated`);
  }
  return { differences, sparse };
}

let currentChild = null;
const systemKey = randomBytes(32).toString('hex');

/** Runs holdfast-run.mjs with `spec`; answers its JSON line (throws unless the run ended Success). */
function holdfastChild(spec) {
  return new Promise((resolve, reject) => {
    // The children stand for a server process, so they run with the server's Node flags (package.json "start").
    const specText = JSON.stringify({ systemKey, ...spec, ...(memorySampleMs > 0 ? { memorySampleMs } : {}) });
    // A kept folder can be used again: each child's spec, to rerun it by hand (node holdfast-run.mjs '<spec>').
    if (isKept) void appendFile(join(work, 'child-specs.jsonl'), `${specText}\n`);
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, join(here, 'holdfast-run.mjs'), specText], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...SERVER_ENV },
    });
    currentChild = child;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutSeconds * 1000);
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      currentChild = null;
      const line = stdout.trim().split('\n').at(-1);
      if (code !== 0 || !line) return reject(new Error(`holdfast-run.mjs (${spec.mode}) exited ${code ?? signal}${signal === 'SIGKILL' ? ` (timeout ${timeoutSeconds} s?)` : ''}`));
      const result = JSON.parse(line);
      if (result.status !== 'Success') return reject(new Error(`${spec.mode} ended ${result.status}: ${[...result.errors, ...(result.warnings ?? [])].join('; ')}`));
      resolve(result);
    });
  });
}

/** The memory timeline in brief: RSS at each tenth of the run, and the breakdown at the highest sample. */
function memorySummary(result) {
  const samples = result.memorySamples ?? [];
  if (samples.length === 0) return null;
  const peak = samples.reduce((best, sample) => (sample[1] > best[1] ? sample : best));
  const mib = (bytes) => Math.round((bytes / MiB) * 10) / 10;
  const describe = ([ms, rssKiB, anonKiB, fileKiB, threads, heapTotal, heapUsed, external, arrayBuffers]) => ({
    seconds: ms / 1000,
    rssMiB: mib(rssKiB * 1024),
    anonMiB: mib(anonKiB * 1024),
    fileMiB: mib(fileKiB * 1024),
    threads,
    heapTotalMiB: mib(heapTotal),
    heapUsedMiB: mib(heapUsed),
    externalMiB: mib(external),
    arrayBuffersMiB: mib(arrayBuffers),
  });
  const tenths = Array.from({ length: 11 }, (_, tenth) => samples[Math.min(samples.length - 1, Math.floor((tenth / 10) * (samples.length - 1)))]);
  return { sampleMs: memorySampleMs, samples: samples.length, peakSample: describe(peak), atTenths: tenths.map(describe) };
}

const childFigures = (result) => ({
  seconds: result.seconds,
  peakRssMiB: Math.round((result.peakRssKiB / 1024) * 10) / 10,
  idleRssMiB: Math.round((result.baselineRssKiB / 1024) * 10) / 10,
  peakOfSamples: Object.fromEntries(Object.entries(result.memoryPeak).map(([key, bytes]) => [`${key}MiB`, Math.round((bytes / MiB) * 10) / 10])),
  memory: memorySummary(result),
});

async function allocatedBytes(path) {
  const { stdout } = await run('du', ['-sB1', path]);
  return Number(stdout.split('\t')[0]);
}

const work = await mkdtemp(join(tmpdir(), 'holdfast-archive-roundtrip-'));
const cleanUp = () => rm(work, { recursive: true, force: true });
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    currentChild?.kill('SIGKILL');
    log(`${signal}: removing ${work}`);
    cleanUp().finally(() => process.exit(130));
  });
}

const report = {
  startedAt: new Date().toISOString(),
  machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 1024 ** 3), node: process.version, loadAtStart: await loadAverage() },
  config: { files: fileCount, sparseGiB, codec, isEncrypted, seed, childNodeFlags: SERVER_NODE_FLAGS, childEnv: SERVER_ENV },
};
let failure = null;
try {
  const source = join(work, 'src');
  const storage = join(work, 'storage');
  const restoreDir = join(work, 'restore');
  await Promise.all([source, storage, restoreDir, join(work, 'data')].map((dir) => mkdir(dir, { recursive: true })));
  log(`generating ${fileCount} files and a ${sparseGiB} GiB sparse file under ${source}`);
  let started = process.hrtime.bigint();
  const tree = await generateTree(source, { files: fileCount, sparseBytes: Math.round(sparseGiB * 1024 ** 3) });
  tree.generateSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  tree.allocatedBytes = await allocatedBytes(source);
  log(`describing and hashing the source tree`);
  started = process.hrtime.bigint();
  const before = await describeTree(source);
  tree.entries = before.size;
  tree.describeSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  report.tree = tree;

  log(`backup (${codec}, ${isEncrypted ? 'encrypted' : 'not encrypted'}, SEEKABLE), load ${await loadAverage()}`);
  const backup = await holdfastChild({ mode: 'backup', kind: 'directory', target: source, destinations: [storage], dataDir: join(work, 'data'), compression: codec, encrypt: isEncrypted, archiveFormat: 'SEEKABLE' });
  const objects = await Promise.all((await readdir(storage)).map(async (name) => ({ name, bytes: (await lstat(join(storage, name))).size })));
  report.backup = { ...childFigures(backup), archive: backup.path, archiveBytes: backup.size, objects, warnings: backup.warnings };
  log(`  ${backup.seconds.toFixed(1)} s, archive ${(backup.size / MiB).toFixed(1)} MiB, peak RSS ${(backup.peakRssKiB / 1024).toFixed(0)} MiB`);

  log(`restore into ${restoreDir}, load ${await loadAverage()}`);
  const restore = await holdfastChild({ mode: 'restore', dataDir: join(work, 'data'), storageId: backup.storageId, file: backup.path, targetPath: restoreDir });
  report.restore = { ...childFigures(restore), allocatedBytes: await allocatedBytes(restoreDir), warnings: restore.warnings };
  log(`  ${restore.seconds.toFixed(1)} s, peak RSS ${(restore.peakRssKiB / 1024).toFixed(0)} MiB`);

  log('describing, hashing and comparing the restored tree');
  started = process.hrtime.bigint();
  const restoredRoot = join(restoreDir, '0-src');
  const after = await describeTree(restoredRoot);
  const { differences, sparse } = compareTrees(before, after, tree.sparsePath);
  const byField = {};
  for (const difference of differences) byField[difference.field] = (byField[difference.field] ?? 0) + 1;
  // mtime differences by shape: one microsecond off (rounding on the way to utimes), a time before 1970, or other.
  // The listed examples are the first 50 of each field (of each shape for mtimes), so a rare kind is never hidden.
  const mtimeKinds = {};
  const listed = [];
  const perKind = new Map();
  for (const difference of differences) {
    let kind = difference.field;
    if (kind === 'mtime') {
      const { deltaNs, source: sourceNs } = difference;
      difference.kind = Math.abs(deltaNs) < 2000 ? (deltaNs < 0 ? 'one microsecond early' : 'one microsecond late') : BigInt(sourceNs) < 0n ? 'before 1970 in the source' : 'other';
      mtimeKinds[difference.kind] = (mtimeKinds[difference.kind] ?? 0) + 1;
      kind = `mtime: ${difference.kind}`;
    }
    perKind.set(kind, (perKind.get(kind) ?? 0) + 1);
    if (perKind.get(kind) <= 50) listed.push(difference);
  }
  const restoredTop = await readdir(restoreDir);
  report.compare = { seconds: Number(process.hrtime.bigint() - started) / 1e9, entries: after.size, restoredTop, differenceCount: differences.length, byField, mtimeKinds, sparse, differences: listed };
  report.pass = {
    isIdentical: differences.length === 0 && restoredTop.length === 1,
    isBackupRssUnderLimit: backup.peakRssKiB < RSS_LIMIT_KIB,
    isRestoreRssUnderLimit: restore.peakRssKiB < RSS_LIMIT_KIB,
  };
} catch (error) {
  failure = error;
  report.error = error.message;
} finally {
  report.loadAtEnd = await loadAverage();
  if (isKept) log(`kept ${work} (HOLDFAST_BENCH_ARCHIVE_KEEP); remove it when done`);
  else {
    await cleanUp();
    log(`removed ${work}`);
  }
}

const resultsDir = join(here, 'results');
await mkdir(resultsDir, { recursive: true });
const resultFile = join(resultsDir, `archive-roundtrip-${report.startedAt.replace(/[:.]/g, '-')}.json`);
await writeFile(resultFile, `${JSON.stringify(report, null, 2)}\n`);
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);

if (report.compare) {
  const { tree, backup, restore, compare, pass } = report;
  const mib = (bytes) => (bytes / MiB).toFixed(1);
  const rows = [
    ['step', 'seconds', 'size MiB', 'peak RSS MiB', 'idle RSS MiB', '< 200 MiB'],
    ['backup', backup.seconds.toFixed(1), `${mib(backup.archiveBytes)} archive`, backup.peakRssMiB.toFixed(0), backup.idleRssMiB.toFixed(0), pass.isBackupRssUnderLimit ? 'yes' : 'NO'],
    ['restore', restore.seconds.toFixed(1), `${mib(restore.allocatedBytes)} on disk`, restore.peakRssMiB.toFixed(0), restore.idleRssMiB.toFixed(0), pass.isRestoreRssUnderLimit ? 'yes' : 'NO'],
  ];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  const lines = [
    `archive round trip: ${tree.files} files (${mib(tree.fileBytes)} MiB), ${tree.directories} folders (${tree.emptyDirectories} empty), ${tree.symlinks} symlinks, ${tree.hardlinkPaths} hard link paths, sparse ${sparseGiB} GiB; ${codec}${isEncrypted ? ', encrypted' : ''}; load ${report.machine.loadAtStart} -> ${report.loadAtEnd}`,
    ...rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column])).join('  ')),
    compare.sparse ? `sparse file: ${mib(compare.sparse.size)} MiB, allocated ${mib(compare.sparse.sourceAllocatedBytes)} MiB in the source, ${mib(compare.sparse.restoredAllocatedBytes ?? 0)} MiB restored` : 'sparse file: none',
    pass.isIdentical ? `trees identical (${compare.entries} entries)` : `trees DIFFER: ${compare.differenceCount} differences ${JSON.stringify(compare.byField)}; mtimes: ${JSON.stringify(compare.mtimeKinds)}`,
    ...[...new Set(compare.differences.map((d) => d.kind ?? d.field))].flatMap((kind) =>
      compare.differences
        .filter((d) => (d.kind ?? d.field) === kind)
        .slice(0, 3)
        .map((d) => `  ${JSON.stringify(d.path)} ${d.field}${d.kind ? ` (${d.kind})` : ''}: ${JSON.stringify(d.source)} -> ${JSON.stringify(d.restored)}`),
    ),
    `JSON: ${resultFile}`,
  ];
  process.stderr.write(`\n${lines.join('\n')}\n`);
}
if (failure) {
  log(`failed: ${failure.stack ?? failure.message}`);
  process.exit(1);
}
process.exit(Object.values(report.pass).every(Boolean) ? 0 : 1);
