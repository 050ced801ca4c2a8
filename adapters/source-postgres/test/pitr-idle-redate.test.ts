// A server nobody writes to (docs/pitr.md, "A server nobody writes to"): the copy of the segment being written stops
// growing, and without dating it again the window's end and the recovery point would stand still although nothing is
// missing. The stream archives the unchanged copy again, dated by a fresh reading of the insert position, once the
// window's end is `idleRedateMs` old. Against the shared PITR cluster: other suites may write meanwhile (then the
// copies grow and the bound holds anyway); on a quiet cluster the code before this change let the age climb for the
// whole watch (seen: 12 s of 12 s).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { watchIdleChangeLog } from '@holdfast/testkit';
import { FlushClock } from '../src/internal/pitr/flush-clock.js';
import { dropWalStreamSlot, openWalStream } from '../src/internal/pitr/wal-stream.js';
import { physicalConfig, superSql } from './pitr-helpers.js';

const config = physicalConfig();
const work = mkdtempSync(join(tmpdir(), 'hf-pitr-idle-'));
const streamId = `test-idle-${randomBytes(6).toString('hex')}`;
const table = `hf_idle_${randomBytes(4).toString('hex')}`;
const controller = new AbortController();

afterAll(async () => {
  controller.abort();
  await dropWalStreamSlot(config, streamId).catch(() => undefined);
  await superSql(`DROP TABLE IF EXISTS ${table}`);
  rmSync(work, { recursive: true, force: true });
}, 30_000);

describe('dating an unchanged copy again', () => {
  it('the clock tells the newest reading inside a copy without claiming it', () => {
    const clock = new FlushClock(500);
    clock.record({ at: 1_000, lsn: 100n });
    clock.record({ at: 2_000, lsn: 100n });
    clock.record({ at: 3_000, lsn: 200n });
    expect(clock.newestReadingAtOrBelow(150n)).toBe(2_000);
    expect(clock.newestReadingAtOrBelow(50n)).toBeUndefined();
    expect(clock.lastClaim).toBe(500); // peeking claims nothing
    expect(clock.coveredAt(150n)).toBe(2_000);
    expect(clock.lastClaim).toBe(2_000);
  });

  it('keeps the window end of a stream nobody writes to within the re-dating interval plus the flush interval', async () => {
    const idleRedateMs = 3_000;
    const flushIntervalMs = 1_000;
    const stream = openWalStream(config, { streamId, spoolDir: join(work, 'spool'), flushIntervalMs, signal: controller.signal, idleRedateMs });
    // One write after the slot exists, so the segment being written has a partial to report; then 12 s without.
    const watch = await watchIdleChangeLog(stream, {
      write: async () => {
        await superSql(`CREATE TABLE IF NOT EXISTS ${table} (at timestamptz)`);
        await superSql(`INSERT INTO ${table} VALUES (now())`);
      },
      watchMs: 12_000,
    });
    // Bound: the re-dating interval, a flush interval to notice it, and 3 s for a loaded machine.
    expect(watch.oldestAgeMs, watch.described).toBeLessThanOrEqual(idleRedateMs + flushIntervalMs + 3_000);
    expect(watch.piecesAfterLastWrite, watch.described).toBeGreaterThan(0);
    expect(watch.claimsNeverGoBack, watch.described).toBe(true);
    controller.abort();
    await stream.done;
  }, 90_000);
});
