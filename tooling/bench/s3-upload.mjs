// S3 upload benchmark (not part of `npm test`): streams N MiB of random data through the storage-s3 adapter into the
// test Ceph RADOS Gateway and reports the process's peak RSS, the part size and the parallelism it used, both as the
// adapter counted them and as seen from outside (TCP connections to the gateway, and the object's multipart ETag,
// which only matches if the server stored exactly the expected parts). Fails (exit 1) unless the peak RSS growth during
// the upload < parallelParts x partSize + 64 MiB (SPEC "Limits"); the absolute peak is printed too. Build first:
//   npx turbo run build --filter=@holdfast/storage-s3 && node tooling/bench/s3-upload.mjs
// Environment: HOLDFAST_BENCH_S3_MB (default 1024), HOLDFAST_BENCH_S3_PART_MB (default 8), HOLDFAST_BENCH_S3_PARALLEL
// (default 8), HOLDFAST_BENCH_S3_KNOWN_SIZE=1 to pass the size to put() (default: a stream of unknown length),
// HOLDFAST_BENCH_S3_JSON (default /tmp/holdfast-bench/s3-upload.json).
import 'reflect-metadata';
import { createHash, randomFillSync } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { S3Storage, s3StorageConfig } from '@holdfast/storage-s3';
import { ensureCephRgw, RGW_PORT, RGW_STATE_FILE } from '../test-services/ceph-rgw.mjs';

const MiB = 1024 * 1024;
const CHUNK = Number(process.env.HOLDFAST_BENCH_S3_CHUNK_KB ?? 64) * 1024;
const env = process.env;
const totalMiB = Number(env.HOLDFAST_BENCH_S3_MB ?? 1024);
const partMiB = Number(env.HOLDFAST_BENCH_S3_PART_MB ?? 8);
const parallel = Number(env.HOLDFAST_BENCH_S3_PARALLEL ?? 8);
const knownSize = env.HOLDFAST_BENCH_S3_KNOWN_SIZE === '1';
const jsonPath = env.HOLDFAST_BENCH_S3_JSON ?? '/tmp/holdfast-bench/s3-upload.json';
for (const [name, value] of Object.entries({ HOLDFAST_BENCH_S3_MB: totalMiB, HOLDFAST_BENCH_S3_PART_MB: partMiB, HOLDFAST_BENCH_S3_PARALLEL: parallel })) {
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
}
const log = (message) => process.stderr.write(`[bench s3] ${message}\n`);

/** Random bytes, 64 KiB per chunk (as a file or pipe stream delivers them), generated on demand (never held as a whole); hashes each part for the ETag. */
function randomSource(totalBytes, partBytes) {
  const partDigests = [];
  let part = createHash('md5');
  let inPart = 0;
  let produced = 0;
  const stream = new Readable({
    read() {
      if (produced >= totalBytes) {
        if (inPart > 0) partDigests.push(part.digest());
        this.push(null);
        return;
      }
      const chunk = randomFillSync(Buffer.allocUnsafe(Math.min(CHUNK, totalBytes - produced)));
      produced += chunk.length;
      for (let offset = 0; offset < chunk.length; ) {
        const take = Math.min(chunk.length - offset, partBytes - inPart);
        part.update(chunk.subarray(offset, offset + take));
        inPart += take;
        offset += take;
        if (inPart === partBytes) {
          partDigests.push(part.digest());
          part = createHash('md5');
          inPart = 0;
        }
      }
      this.push(chunk);
    },
  });
  const etag = () => `"${createHash('md5').update(Buffer.concat(partDigests)).digest('hex')}-${partDigests.length}"`;
  return { stream, etag };
}

/** Our established TCP connections to the gateway port, and those with unacknowledged bytes, read from /proc. */
function connectionsToGateway() {
  const port = RGW_PORT.toString(16).toUpperCase().padStart(4, '0');
  let count = 0;
  let sending = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length > 4 && fields[2].endsWith(`:${port}`) && fields[3] === '01') {
        count++;
        // tx_queue > 0: bytes sent but not yet acknowledged, i.e. a part body is being transferred right now.
        if (Number.parseInt(fields[4].split(':')[0], 16) > 0) sending++;
      }
    }
  }
  return { count, sending };
}

function peakRssBytes() {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return match ? Number(match[1]) * 1024 : process.memoryUsage().rss;
}

await ensureCephRgw();
const state = JSON.parse(readFileSync(RGW_STATE_FILE, 'utf8'));
const admin = new S3Client({
  endpoint: state.endpoint,
  region: state.region,
  forcePathStyle: true,
  requestChecksumCalculation: 'WHEN_REQUIRED',
  credentials: { accessKeyId: state.accessKeyId, secretAccessKey: state.secretAccessKey },
});
const bucket = `holdfast-bench-${Date.now()}`;
await admin.send(new CreateBucketCommand({ Bucket: bucket }));
const completed = [];
const logger = {
  debug: () => undefined,
  info: (obj, msg) => msg === 's3 multipart upload completed' && completed.push(obj),
  warn: (obj, msg) => log(`warn: ${msg} ${JSON.stringify(obj)}`),
  error: (obj, msg) => log(`error: ${msg} ${JSON.stringify(obj)}`),
};
const config = s3StorageConfig.parse({
  preset: 'custom',
  endpoint: state.endpoint,
  region: state.region,
  bucket,
  accessKeyId: state.accessKeyId,
  secretAccessKey: state.secretAccessKey,
  partSizeMiB: partMiB,
  parallelParts: parallel,
});
const storage = new S3Storage(config, { logger });
const totalBytes = totalMiB * MiB;
const source = randomSource(totalBytes, partMiB * MiB);
const rssBefore = process.memoryUsage().rss;
let maxConnections = 0;
let maxSending = 0;
const sampler = setInterval(() => {
  const seen = connectionsToGateway();
  maxConnections = Math.max(maxConnections, seen.count);
  maxSending = Math.max(maxSending, seen.sending);
}, 50);
log(`uploading ${totalMiB} MiB (${knownSize ? 'known size' : 'stream of unknown length'}), parts ${partMiB} MiB x ${parallel} parallel`);
const started = Date.now();
let result;
try {
  result = await storage.put('bench/random.bin', source.stream, knownSize ? { size: totalBytes } : {});
} finally {
  clearInterval(sampler);
}
const seconds = (Date.now() - started) / 1000;
const peakRss = peakRssBytes();
const head = await admin.send(new HeadObjectCommand({ Bucket: bucket, Key: 'bench/random.bin' }));
await storage.dispose();
await admin.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'bench/random.bin' }));
await admin.send(new DeleteBucketCommand({ Bucket: bucket }));
admin.destroy();

const report = completed[0] ?? {};
const budget = parallel * partMiB * MiB + 64 * MiB;
const row = {
  server: `Ceph RGW (${state.endpoint})`,
  uploadedMiB: result.size / MiB,
  storedMiB: (head.ContentLength ?? 0) / MiB,
  seconds,
  mibPerSecond: Math.round((result.size / MiB / seconds) * 10) / 10,
  configuredPartMiB: partMiB,
  configuredParallelParts: parallel,
  largestPartMiB: (report.largestPartBytes ?? 0) / MiB,
  parts: report.parts,
  maxPartsInFlightCounted: report.maxPartsInFlight,
  maxTcpConnectionsToGateway: maxConnections,
  maxTcpConnectionsSendingAtOnce: maxSending,
  serverEtag: head.ETag,
  etagMatchesExpectedParts: head.ETag === source.etag(),
  rssBeforeMiB: Math.round(rssBefore / MiB),
  peakRssMiB: Math.round(peakRss / MiB),
  peakRssGrowthMiB: Math.round((peakRss - rssBefore) / MiB),
  rssBudgetMiB: budget / MiB,
};
// The budget bounds what the upload adds: the process already holds node, the AWS SDK and the adapter (rssBeforeMiB,
// ~75 MiB here) before the first byte, which no part setting can shrink; the absolute peak is reported beside it.
row.ok = peakRss - rssBefore < budget && row.etagMatchesExpectedParts && row.storedMiB === totalMiB;
mkdirSync(dirname(jsonPath), { recursive: true });
writeFileSync(jsonPath, `${JSON.stringify(row, null, 2)}\n`);
for (const [name, value] of Object.entries(row)) process.stdout.write(`${name.padEnd(32)} ${value}\n`);
process.stdout.write(`(JSON: ${jsonPath})\n`);
if (!row.ok) {
  log(`FAILED: peak RSS growth ${row.peakRssGrowthMiB} MiB vs budget ${row.rssBudgetMiB} MiB, ETag match ${row.etagMatchesExpectedParts}, stored ${row.storedMiB} MiB`);
  process.exit(1);
}
