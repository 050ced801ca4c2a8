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
import type { ChangeLogSegment } from '@holdfast/sdk';
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
    const seen: Array<ChangeLogSegment & { seenAt: number }> = [];
    const consumed = (async () => {
      for await (const segment of stream.segments) {
        seen.push({ ...segment, seenAt: Date.now() });
        await stream.archived(segment);
      }
    })();
    consumed.catch(() => undefined);
    // Writes until the file being written has been reported, so there is a copy to date again.
    const deadline = Date.now() + 30_000;
    while (!seen.some((segment) => segment.partial)) {
      if (Date.now() > deadline) throw new Error(`no partial within 30 s; seen: ${seen.map((s) => s.name).join(' ')}`);
      await adminSql(`INSERT INTO ${database}.ticks VALUES (NOW(3))`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const lastWrite = Date.now();
    let oldest = 0;
    const watchEnd = Date.now() + 12_000;
    while (Date.now() < watchEnd) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const newest = Math.max(...seen.map((segment) => segment.coversUntil.getTime()));
      oldest = Math.max(oldest, Date.now() - newest);
    }
    const claims = seen.map((s) => `${s.name}${s.partial ? '(p)' : ''}:${s.endPosition}@${s.coversUntil.toISOString()}`).join(' ');
    // Bound: the re-dating interval, a flush interval to notice it, and 3 s for a loaded machine.
    expect(oldest, claims).toBeLessThanOrEqual(idleRedateMs + flushIntervalMs + 3_000);
    expect(seen.filter((segment) => segment.seenAt > lastWrite + 2_000).length, claims).toBeGreaterThan(0);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.coversUntil.getTime(), claims).toBeGreaterThanOrEqual(seen[i - 1]!.coversUntil.getTime());
    controller.abort();
    await stream.done;
    await consumed;
  }, 90_000);
});
