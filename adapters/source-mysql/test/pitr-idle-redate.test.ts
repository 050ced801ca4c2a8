// A server nobody writes to (docs/pitr.md, "A server nobody writes to"): the binary log stops growing, and without
// dating the unchanged copy again the window's end and the recovery point would stand still although nothing is
// missing. The stream archives the same copy again, dated by a fresh SHOW BINARY LOGS reading it has caught up with,
// once the window's end is `idleRedateMs` old. Against the shared MariaDB PITR server: other suites may write
// meanwhile (then the copies grow and the bound holds anyway); on a quiet server the code before this change let the
// age climb for the whole watch.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchIdleChangeLog } from '@holdfast/testkit';
import { openBinlogStream } from '../src/internal/pitr/binlog-stream.js';
import { adminSql, pitrConfig } from './pitr-helpers.js';

const config = pitrConfig('binlog');
const work = mkdtempSync(join(tmpdir(), 'hf-binlog-idle-'));
const database = `hf_binlog_idle_${randomBytes(4).toString('hex')}`;
const controller = new AbortController();

beforeAll(async () => {
  await adminSql(`CREATE DATABASE ${database}`);
  await adminSql(`CREATE TABLE ${database}.ticks (at DATETIME(3))`);
});

afterAll(async () => {
  controller.abort();
  await adminSql(`DROP DATABASE IF EXISTS ${database}`);
  rmSync(work, { recursive: true, force: true });
}, 30_000);

describe('the binary log stream of a server nobody writes to', () => {
  it('keeps the window end within the re-dating interval plus the flush interval, archiving the unchanged copy again', async () => {
    const idleRedateMs = 3_000;
    const flushIntervalMs = 1_000;
    const stream = openBinlogStream(config, { streamId: `test-idle-${randomBytes(4).toString('hex')}`, spoolDir: join(work, 'spool'), flushIntervalMs, signal: controller.signal, idleRedateMs });
    // Writes until the file being written has been reported, so there is a copy to date again; then 12 s without.
    const watch = await watchIdleChangeLog(stream, { write: () => adminSql(`INSERT INTO ${database}.ticks VALUES (NOW(3))`), watchMs: 12_000 });
    // Bound: the re-dating interval, a flush interval to notice it, and 3 s for a loaded machine.
    expect(watch.oldestAgeMs, watch.described).toBeLessThanOrEqual(idleRedateMs + flushIntervalMs + 3_000);
    expect(watch.piecesAfterLastWrite, watch.described).toBeGreaterThan(0);
    expect(watch.claimsNeverGoBack, watch.described).toBe(true);
    controller.abort();
    await stream.done;
  }, 90_000);
});
