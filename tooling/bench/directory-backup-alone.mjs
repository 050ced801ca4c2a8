// The directory source's backup stream alone (no server, no catalog, no job): its tar dump through the engine's
// streamBackup (byte counter, compressor, SHA-256 + MD5, fan-out) into one file, against `tar -cf - | zstd` of the
// same folder. The Holdfast side compresses as a server does by default (an external `zstd -3 -T0` when installed)
// and runs with the server's heap settings and young collections; wall and CPU seconds (this process and zstd), the
// SHA-256 of the stored bytes (the same tree and code give the same digest: a quick check that a change kept the
// archive byte-identical). Build first. Used for the profile of docs/benchmarks.md "Where a large-file backup's time
// goes". Usage:
//   node tooling/bench/directory-backup-alone.mjs <folder> [holdfast|holdfast-in-process|tar] [source-directory dist] [engine dist]
//   holdfast: as a server does (the archive writer's child writes into zstd's stdin; docs/benchmarks.md, "The archive
//   writer's own process"); holdfast-in-process: the tar written in this process and copied into zstd's stdin
//   (an empty dist argument, '', is the repository's own)
//   HOLDFAST_BENCH_OUTPUT_BASE  where the output file goes (default /dev/shm)
//   HOLDFAST_BENCH_ALONE_LOCAL  1: the file is written as storage-local writes a put (temp file, byte counter, flushes
//                               while it streams, fsync, rename); default: a plain fs WriteStream
// Start it with the server's flags and allocator settings (tooling/bench/lib/server-node-flags.mjs) to compare with
// the table's figures: MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=2
// --max-old-space-size=1536 tooling/bench/directory-backup-alone.mjs ... (add --cpu-prof for a profile).
// A/B: copy a package's dist/ somewhere under node_modules/ (so its imports resolve) before a change, then alternate
// runs with that folder as the third or fourth argument and without.
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { applyServerHeapSettings } from '../../apps/server/dist/heap-settings.js';
import { applyYoungCollections } from '../../apps/server/dist/young-collections.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const [folderArg, which = 'holdfast', sourceDistArg, engineDistArg] = process.argv.slice(2);
if (!folderArg || !['holdfast', 'holdfast-in-process', 'tar'].includes(which)) {
  console.error('usage: directory-backup-alone.mjs <folder> [holdfast|holdfast-in-process|tar] [source-directory dist] [engine dist]');
  process.exit(2);
}
const folder = resolve(folderArg);
const sourceDist = resolve(sourceDistArg || join(repoRoot, 'adapters', 'source-directory', 'dist'));
const engineDist = resolve(engineDistArg || join(repoRoot, 'plugins', 'engine', 'dist'));
const importFrom = (dist, path) => import(pathToFileURL(join(dist, path)).href);
// What the server does at startup (apps/server): its heap growth and the paced young collections.
applyServerHeapSettings(process.env);
applyYoungCollections(process.env);
const silent = { debug() {}, info() {}, warn() {}, error() {} };
silent.child = () => silent;

// Loaded before the clock starts (module loading is not the backup's time).
const { startDump } = await importFrom(sourceDist, 'internal/dump.js');
const { startPipedDump } = await importFrom(sourceDist, 'internal/piped-dump.js');
const { streamBackup } = await importFrom(engineDist, 'run/backup-pipeline.js');
const { externalCompressorFor, createExternalCompressStream } = await importFrom(engineDist, 'codec/compression/external-compressor.js');
const { writeAtomically } = await importFrom(join(repoRoot, 'adapters', 'storage-local', 'dist'), 'internal/atomic-write.js');
const asLocalPut = process.env.HOLDFAST_BENCH_ALONE_LOCAL === '1';

/** The Holdfast side: dump -> streamBackup -> one file; answers the digests. */
async function holdfastBackup(output, piped) {
  const signal = new AbortController().signal;
  const roots = [{ index: 0, path: folder }];
  const externalCompressor = externalCompressorFor({ codec: 'ZSTD' });
  const compressor = piped ? createExternalCompressStream(externalCompressor) : undefined;
  const dump = piped
    ? await startPipedDump({ roots, exclude: [], followSymlinks: false, input: compressor.input, logger: silent, signal })
    : await startDump({ roots, exclude: [], followSymlinks: false, maxOpenFiles: 16, logger: silent, signal });
  if (piped) compressor.releaseInput();
  const put = asLocalPut ? (_key, body) => writeAtomically(output, dirname(output), body) : (_key, body) => pipeline(body, createWriteStream(output));
  const storage = { name: 'file', adapter: { put } };
  const result = await streamBackup({
    dump: dump.stream,
    codec: 'ZSTD',
    externalCompressor,
    ...(piped ? { compressor, piped: { bytesWritten: dump.piped.bytesWritten, done: dump.done } } : {}),
    encryptionKey: null,
    storages: [storage],
    key: 'backup',
    signal,
    onBytes() {},
  });
  await dump.done;
  if (!result.outcomes.every((outcome) => outcome.ok)) throw new Error(`the put failed: ${result.outcomes.map((outcome) => outcome.error).join('; ')}`);
  return result.digests;
}

const work = await mkdtemp(join(process.env.HOLDFAST_BENCH_OUTPUT_BASE ?? '/dev/shm', 'backup-alone-'));
const output = join(work, 'backup.zst');
const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
const cpuBefore = process.cpuUsage();
const started = process.hrtime.bigint();
try {
  let digests;
  if (which !== 'tar') digests = await holdfastBackup(output, which === 'holdfast');
  else execFileSync('sh', ['-c', `tar -cf - -C '${dirname(folder)}' '${basename(folder)}' | zstd -3 -T0 -q -c > '${output}'`]);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  // The children's CPU (zstd, tar), from /proc/self/stat's cutime and cstime, in clock ticks of 1/100 s.
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  const childrenCpu = (Number(fields[13]) + Number(fields[14])) / 100;
  const cpuSeconds = (cpu.user + cpu.system) / 1e6 + childrenCpu;
  console.log(
    JSON.stringify({
      which,
      seconds: Number(seconds.toFixed(3)),
      cpuSeconds: Number(cpuSeconds.toFixed(3)),
      childrenCpuSeconds: childrenCpu,
      storedBytes: digests?.bytes,
      sha256: digests?.sha256,
      peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
      load,
    })
  );
} finally {
  await rm(work, { recursive: true, force: true });
}
