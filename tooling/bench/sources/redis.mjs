// Redis source benchmark: `redis-cli --rdb - | gzip` against the adapter's dump + gzip in both modes (rdb and
// logical), same data, same run. Seeds database index 9 of the local Redis (127.0.0.1:6379) and flushes only that
// index afterwards. Needs a built @holdfast/source-redis. Size: HOLDFAST_BENCH_SIZE_MB.
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import definition from '@holdfast/source-redis';
import { log, report, run, sizeMiB, timeAdapter, timeShell } from './lib.mjs';

const DB = 9;
const keys = Math.round((sizeMiB() * 1024 * 1024) / 1100);
const redis = new Redis({ host: '127.0.0.1', port: 6379, db: DB });
const work = await mkdtemp(join(tmpdir(), 'hf-bench-redis-'));
try {
  log(`seeding database ${DB} with ${keys} keys (~${sizeMiB()} MiB)`);
  await redis.flushdb();
  for (let start = 0; start < keys; start += 5000) {
    const batch = redis.pipeline();
    for (let i = start; i < Math.min(keys, start + 5000); i++) {
      // Half random (incompressible), half repetitive, like real cache values.
      batch.set(`bench:${i}`, `${randomBytes(256).toString('hex')}${'user-session-data;'.repeat(28)}`);
    }
    await batch.exec();
  }
  log('baseline: redis-cli --rdb - | gzip');
  const baselineOut = join(work, 'baseline.rdb.gz');
  const baseline = await timeShell(`redis-cli -h 127.0.0.1 -p 6379 --rdb - 2>/dev/null | gzip > ${baselineOut}`);
  const baselineBytes = Number((await run('sh', ['-c', `gzip -dc ${baselineOut} | wc -c`])).trim());
  log('adapter: @holdfast/source-redis rdb mode | zlib gzip');
  const rdb = await timeAdapter(definition, { host: '127.0.0.1', mode: 'rdb' }, {}, join(work, 'adapter.rdb.gz'));
  report('redis (rdb)', { baseline: baselineBytes, adapter: rdb.dumpBytes }, { label: 'redis-cli --rdb | gzip', ...baseline }, { label: 'source-redis rdb + gzip', ...rdb });
  log('adapter: @holdfast/source-redis logical mode | zlib gzip');
  const logical = await timeAdapter(definition, { host: '127.0.0.1', mode: 'logical', database: DB }, { databases: [String(DB)] }, join(work, 'adapter.hfredis.gz'));
  report('redis (logical)', { baseline: baselineBytes, adapter: logical.dumpBytes }, { label: 'redis-cli --rdb | gzip', ...baseline }, { label: 'source-redis logical + gzip', ...logical });
} finally {
  await redis.flushdb().catch(() => undefined);
  redis.disconnect();
  await rm(work, { recursive: true, force: true });
}
