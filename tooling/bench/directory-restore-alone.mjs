// The directory source's tar restore alone (no server, no decoders), against `tar -x` of the same file: a tar read in
// 64 KiB pieces (as the engine hands a restore its input) into restoreArchive below a fresh folder, wall and CPU
// seconds. Build first. Used for the A/B of docs/benchmarks.md "Directory restores without round trips".
// Usage: node tooling/bench/directory-restore-alone.mjs <file.tar> [holdfast|tar] [dist folder of source-directory]
//   HOLDFAST_BENCH_RESTORE_BASE  where the restore folders go (default /dev/shm: the VM's ext4 /tmp slows small-file
//                                restores of both sides down from run to run)
// A/B: copy adapters/source-directory/dist somewhere under node_modules/ (so its imports resolve) before a change,
// then alternate runs with that folder as the third argument and without.
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { createReadStream, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const [tarFile, which = 'holdfast', distArg] = process.argv.slice(2);
if (!tarFile || !['holdfast', 'tar'].includes(which)) {
  console.error('usage: directory-restore-alone.mjs <file.tar> [holdfast|tar] [dist folder]');
  process.exit(2);
}
const dist = resolve(distArg ?? join(repoRoot, 'adapters', 'source-directory', 'dist'));
const { restoreArchive } = await import(pathToFileURL(join(dist, 'internal', 'restore.js')).href);
const target = await mkdtemp(join(process.env.HOLDFAST_BENCH_RESTORE_BASE ?? '/dev/shm', 'restore-alone-'));
const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
const cpuBefore = process.cpuUsage();
const started = process.hrtime.bigint();
try {
  if (which === 'holdfast') {
    const input = createReadStream(tarFile, { highWaterMark: 64 * 1024 });
    const result = await restoreArchive(input, { kind: 'folder', path: target }, new AbortController().signal, { keepSpecialModes: false });
    if (result.warnings.length > 0) console.error(result.warnings.slice(0, 5));
  } else {
    execFileSync('tar', ['-x', '-C', target, '-f', tarFile]);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  // The children's CPU (tar), from /proc/self/stat's cutime and cstime, in clock ticks of 1/100 s.
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  const childrenCpu = (Number(fields[13]) + Number(fields[14])) / 100;
  const cpuSeconds = (cpu.user + cpu.system) / 1e6 + childrenCpu;
  console.log(JSON.stringify({ which, dist, seconds: Number(seconds.toFixed(3)), cpuSeconds: Number(cpuSeconds.toFixed(3)), peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024), load }));
} finally {
  await rm(target, { recursive: true, force: true });
}
