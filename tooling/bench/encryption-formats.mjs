// Encryption format benchmark of issue 45 (`node tooling/bench/encryption-formats.mjs`; not part of `npm test`):
// the same input streamed through the symmetric HFENC encrypter and the public-key age encrypter (and back through
// their decrypters), alternating row by row so a load spike hits both sides. Input: incompressible bytes (a 1 MiB
// random block repeated) in 64 KiB pieces, as a compressor hands them on; output: hashed (SHA-256, as the backup
// pipeline does) and dropped. Figures: median seconds and MiB/s, spread, and the process's peak RSS.
//   HOLDFAST_BENCH_SIZE_MB   plaintext size (default 1024)
//   HOLDFAST_BENCH_REPEATS   runs per row (default 5)
// The pipeline benchmark (pipeline.mjs) has the end-to-end rows: 'pg: Holdfast ZSTD encrypted' and
// 'pg: Holdfast ZSTD age-encrypted (public-key profile)'.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { generateAgeIdentity } from '../../kernel/dist/index.js';
import { createAgeDecryptStream, createAgeEncryptStream, createDecryptStream, createEncryptStream } from '../../plugins/engine/dist/index.js';

const sizeMiB = Number(process.env.HOLDFAST_BENCH_SIZE_MB ?? 1024);
const repeats = Number(process.env.HOLDFAST_BENCH_REPEATS ?? 5);
const PIECE = 64 * 1024;
const block = randomBytes(1024 * 1024);
const profileKey = randomBytes(32);
const { identity, recipient } = generateAgeIdentity();

/** `sizeMiB` of plaintext in 64 KiB pieces, never held whole. */
function plaintext() {
  let sent = 0;
  const total = sizeMiB * 1024 * 1024;
  return new Readable({
    read() {
      if (sent >= total) return this.push(null);
      const offset = sent % block.length;
      const piece = block.subarray(offset, Math.min(offset + PIECE, block.length, offset + total - sent));
      sent += piece.length;
      this.push(piece);
    },
  });
}

/** A sink that hashes what it gets and keeps nothing; or keeps it when `keep` (the small ciphertext for decrypt rows). */
function sink(keep) {
  const hash = createHash('sha256');
  const writable = new Writable({
    write(chunk, _encoding, callback) {
      hash.update(chunk);
      if (keep) keep.push(chunk);
      callback();
    },
  });
  return writable;
}

/** Wall seconds and CPU seconds of this process (the ciphers run on the main thread: CPU time shows their cost even
 * when other work on a shared machine stretches the wall time). */
async function timed(run) {
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  await run();
  const used = process.cpuUsage(cpu);
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, cpuSeconds: (used.user + used.system) / 1e6 };
}

const rows = [
  { name: 'encrypt: HFENC (AES-256-GCM, symmetric profile)', run: () => pipeline(plaintext(), createEncryptStream({ key: profileKey }), sink()) },
  { name: 'encrypt: age (X25519 + ChaCha20-Poly1305, public-key profile)', run: () => pipeline(plaintext(), createAgeEncryptStream(recipient), sink()) },
  {
    name: 'encrypt+decrypt: HFENC',
    run: () => pipeline(plaintext(), createEncryptStream({ key: profileKey }), createDecryptStream({ key: profileKey }), sink()),
  },
  {
    name: 'encrypt+decrypt: age',
    run: () => pipeline(plaintext(), createAgeEncryptStream(recipient), createAgeDecryptStream(identity), sink()),
  },
];

const peakRssKiB = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const results = new Map(rows.map((row) => [row.name, []]));
for (let round = 0; round < repeats; round++) {
  for (const row of rows) {
    const measured = await timed(row.run);
    results.get(row.name).push(measured);
    process.stderr.write(`[bench] round ${round + 1}/${repeats}: ${row.name}: ${measured.seconds.toFixed(3)} s, CPU ${measured.cpuSeconds.toFixed(3)} s\n`);
  }
}
const summary = rows.map((row) => {
  const runs = results.get(row.name).map((run) => run.seconds);
  const seconds = median(runs);
  const cpuSeconds = median(results.get(row.name).map((run) => run.cpuSeconds));
  return { name: row.name, medianSeconds: seconds, cpuSeconds, mibPerSecond: sizeMiB / seconds, minSeconds: Math.min(...runs), maxSeconds: Math.max(...runs) };
});
const by = (name) => summary.find((row) => row.name === name);
const encryptRatio = by(rows[0].name).medianSeconds / by(rows[1].name).medianSeconds;
const roundTripRatio = by(rows[2].name).medianSeconds / by(rows[3].name).medianSeconds;
const encryptCpuRatio = by(rows[0].name).cpuSeconds / by(rows[1].name).cpuSeconds;
const roundTripCpuRatio = by(rows[2].name).cpuSeconds / by(rows[3].name).cpuSeconds;
console.log(`encryption formats, ${sizeMiB} MiB, ${repeats} runs per row, Node ${process.version}, load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`);
for (const row of summary) {
  console.log(`${row.name.padEnd(66)} ${row.medianSeconds.toFixed(3)} s  ${row.mibPerSecond.toFixed(0).padStart(5)} MiB/s  (${row.minSeconds.toFixed(3)}-${row.maxSeconds.toFixed(3)})  CPU ${row.cpuSeconds.toFixed(3)} s`);
}
console.log(`speed age / HFENC, encrypt: ${encryptRatio.toFixed(2)} (issue 45: >= 0.90); encrypt+decrypt: ${roundTripRatio.toFixed(2)}`);
console.log(`CPU cost HFENC / age, encrypt: ${encryptCpuRatio.toFixed(2)}; encrypt+decrypt: ${roundTripCpuRatio.toFixed(2)}`);
console.log(`peak RSS of the process: ${(peakRssKiB() / 1024).toFixed(0)} MiB (input never held whole: flat memory)`);
