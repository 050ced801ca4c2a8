import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdapterError, type BaseBackupInfo } from '@holdfast/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StorageInstance } from '../../src/run/adapters.js';
import type { ArchivedPiece } from '../../src/pitr/change-log-store.js';
import { piecesToPrune, pruneChangeLog } from '../../src/pitr/wal-retention.js';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { nextBase, scriptedLog, scriptedLogs } from './pitr-doubles.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const seg = (n: number, timeline = 1) => `${String(timeline).padStart(8, '0')}00000000${n.toString(16).toUpperCase().padStart(8, '0')}`;
const at = (second: number) => new Date(Date.UTC(2026, 11, 6, 3, 0, second));
const keepTwo = { policyId: 'p2', strategyId: 'gfs', config: { mode: 'keep-last', count: 2 } };

function baseAt(startSegment: number, consistentSecond: number): BaseBackupInfo {
  return {
    logKind: 'postgres-wal',
    startPosition: `0/${startSegment}000028`,
    stopPosition: `0/${startSegment}000100`,
    startSegment: seg(startSegment),
    timeline: 1,
    systemId: '7300000000000000001',
    serverVersion: '15.8',
    startedAt: at(consistentSecond - 1),
    consistentAt: at(consistentSecond),
  };
}

function piece(name: string, timeline = 1, partial = false): ArchivedPiece {
  return { id: 1, jobId: 'j', name, timeline, partial, storageKey: name, plainSize: 1, storedSize: 1, sha256: '', coversUntil: at(0), archivedAt: at(0), destinations: ['d'] };
}

describe('which archived pieces no retained base backup needs', () => {
  it('prunes before the oldest retained base on its timeline, older timelines whole, never newer ones nor non-segment names', () => {
    const pieces = [piece(seg(2)), piece(seg(3), 1, true), piece(seg(4)), piece(seg(5)), piece(seg(6, 2), 2), piece('00000002.history', 1)];
    expect(piecesToPrune('postgres-wal', [{ startSegment: seg(4), timeline: 1 }], pieces).map((p) => p.piece.name)).toEqual([seg(2), seg(3)]);
    // The only retained base is on timeline 2: timeline 1 goes whole, timeline 2 from the base on stays.
    const onTwo = [...pieces, piece(seg(7, 2), 2)];
    expect(piecesToPrune('postgres-wal', [{ startSegment: seg(7, 2), timeline: 2 }], onTwo).map((p) => `${p.piece.timeline}:${p.piece.name}`)).toEqual([`1:${seg(2)}`, `1:${seg(3)}`, `1:${seg(4)}`, `1:${seg(5)}`, `2:${seg(6, 2)}`]);
    // A base on timeline 1 keeps timeline 2, which it replays into.
    expect(piecesToPrune('postgres-wal', [{ startSegment: seg(5), timeline: 1 }], onTwo).map((p) => p.piece.name)).toEqual([seg(2), seg(3), seg(4)]);
  });

  it('keeps everything without a retained base backup (safe: the next base prunes it)', () => {
    expect(piecesToPrune('postgres-wal', [], [piece(seg(2)), piece(seg(3))])).toEqual([]);
  });

  it('orders across a log id boundary whatever the segment size', () => {
    const next = '000000010000000B00000000';
    expect(piecesToPrune('postgres-wal', [{ startSegment: next, timeline: 1 }], [piece('000000010000000A000000FF'), piece(next)]).map((p) => p.piece.name)).toEqual(['000000010000000A000000FF']);
  });
});

describe.each(['sqlite', 'postgresql'] as const)('WAL retention after a job retention pass (test double source, %s)', (dialect) => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let dir: string;
  let key: string;

  beforeAll(async () => {
    scriptedLogs.clear();
    target = await createTarget(dialect);
    server = await startPitrServer(target);
    dir = await mkdtemp(join(tmpdir(), 'hf-wal-retention-'));
    server.catalog.addConfig({ configId: 'pg', name: 'Cluster', kind: 'source', adapterId: 'pitr-double', config: {} });
    server.catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    key = await server.apiKey('runner', ['history:read', 'jobs:execute']);
  });

  afterAll(async () => {
    await server.close();
    await target.drop();
    await rm(dir, { recursive: true, force: true });
  });

  /** Three base backups (A at segment 3, B at 5, C at 7) with the log between them archived; answers the runs. */
  async function threeBases(jobId: string, options: { lockFirst: boolean }) {
    server.catalog.addJob({ id: jobId, name: jobId }, 'pg', [{ configId: 'disk', retention: keepTwo }]);
    const log = scriptedLog(jobId);
    await until('the stream to open', () => log.opens.length >= 1);
    const runs = [];
    for (const [index, start] of [3, 5, 7].entries()) {
      nextBase.info = baseAt(start, 10 * (index + 1));
      const run = await call(server.url, 'POST', `/api/jobs/${jobId}/run`, { key, ...(index === 0 && options.lockFirst ? { json: { lock: true } } : {}) });
      expect(run.status).toBe(200);
      const done = await waitForEnd(server.url, key, run.body.executionId);
      expect(done.status, JSON.stringify(done.logs)).toBe('Success');
      runs.push(done);
      if (index < 2) {
        // The log of this base up to the next one: two completed segments.
        for (const offset of [0, 1]) await log.emit({ name: seg(start + offset), bytes: Buffer.alloc(2048, start + offset), coversUntil: at(10 * (index + 1) + 3 * (offset + 1)) });
        await until(`segments ${start} and ${start + 1} archived`, () => log.archived.filter((p) => p.name === seg(start) || p.name === seg(start + 1)).length === 2);
      }
    }
    return { runs, log };
  }

  const walFile = (jobId: string, n: number) => join(dir, 'pitr', jobId, 'wal', '00000001', seg(n));

  it('three bases, retention drops the oldest: its WAL is gone, the WAL of the other two intact, the window starts at the next base', async () => {
    const jobId = `wal-${dialect}`;
    const { runs, log } = await threeBases(jobId, { lockFirst: false });
    // The third run pruned A (keep-last 2): bases B and C remain.
    expect((await server.changeLogs.basesOf(jobId)).map((base) => base.executionId)).toEqual([runs[1].id, runs[2].id]);
    const names = (await server.changeLogs.piecesOf(jobId)).map((p) => p.name);
    expect(names).toEqual([seg(5), seg(6)]);
    expect(existsSync(walFile(jobId, 3))).toBe(false);
    expect(existsSync(walFile(jobId, 4))).toBe(false);
    expect(existsSync(walFile(jobId, 5))).toBe(true);
    expect(existsSync(walFile(jobId, 6))).toBe(true);
    expect(runs[2].logs.map((entry: { message: string }) => entry.message)).toContainEqual(expect.stringMatching(/WAL retention: deleted 2 archived piece\(s\)/));

    // C's log arrives: the window runs from B (the oldest retained base) to the newest piece.
    await log.emit({ name: seg(7), bytes: Buffer.alloc(2048, 7), coversUntil: at(35) });
    await until('segment 7 archived', () => log.archived.some((p) => p.name === seg(7)));
    const window = await call(server.url, 'GET', `/api/jobs/${jobId}/point-in-time`, { key });
    expect(window.body.data.window).toEqual({ start: at(20).toISOString(), end: at(35).toISOString(), baseExecutionId: runs[1].id, timeline: 1 });
    expect(window.body.data.gaps).toEqual([]);
  });

  it('a locked oldest base keeps all its WAL', async () => {
    const jobId = `wal-locked-${dialect}`;
    const { runs } = await threeBases(jobId, { lockFirst: true });
    expect((await server.changeLogs.basesOf(jobId)).map((base) => base.executionId)).toEqual(runs.map((run) => run.id));
    expect((await server.changeLogs.piecesOf(jobId)).map((p) => p.name)).toEqual([seg(3), seg(4), seg(5), seg(6)]);
    for (const n of [3, 4, 5, 6]) expect(existsSync(walFile(jobId, n))).toBe(true);
  });

  it('a destination that refuses deletion under an object lock keeps its copy and the row, and the next prune finishes the job', async () => {
    const jobId = `wal-object-lock-${dialect}`;
    const store = server.changeLogs;
    await store.recordBase({ executionId: `e-${dialect}-1`, jobId, storageKey: 'b1', ...baseAt(5, 10), destinations: ['disk'] });
    const saved = (name: string, destinations: string[]) =>
      store.savePiece({ jobId, name, timeline: 1, partial: false, storageKey: `pitr/${jobId}/wal/00000001/${name}`, plainSize: 1, storedSize: 1, sha256: 'x', coversUntil: at(1), archivedAt: at(1), destinations });
    await saved(seg(4), ['disk', 'vault']);
    await saved(seg(5), ['disk', 'vault']);
    const deletes: string[] = [];
    let isLocked = true;
    // TEST DOUBLE: a destination whose store refuses deletes as an S3 bucket under object lock does (adapter error LOCKED).
    const storage = (configId: string, refuses: () => boolean): StorageInstance =>
      ({
        configId,
        name: configId,
        adapterId: 'double',
        capabilities: {},
        adapter: {
          delete: async (key: string) => {
            if (refuses()) throw new AdapterError('double', 'LOCKED', `${key} is locked until 2027-01-01`);
            deletes.push(`${configId}:${key}`);
          },
        },
      }) as unknown as StorageInstance;
    const storages = [storage('disk', () => false), storage('vault', () => isLocked)];
    const logger = { info: () => undefined, warn: () => undefined };
    const first = await pruneChangeLog({ store, storages, logger }, jobId);
    expect(first).toEqual({ deleted: [], locked: [`pitr/${jobId}/wal/00000001/${seg(4)}`], errors: [] });
    expect(deletes).toEqual([`disk:pitr/${jobId}/wal/00000001/${seg(4)}`]);
    expect((await store.piecesOf(jobId)).map((p) => [p.name, p.destinations])).toEqual([[seg(4), ['vault']], [seg(5), ['disk', 'vault']]]);
    isLocked = false;
    const second = await pruneChangeLog({ store, storages, logger }, jobId);
    expect(second.deleted).toEqual([`pitr/${jobId}/wal/00000001/${seg(4)}`]);
    expect(deletes.at(-1)).toBe(`vault:pitr/${jobId}/wal/00000001/${seg(4)}`);
    expect((await store.piecesOf(jobId)).map((p) => p.name)).toEqual([seg(5)]);
  });
});
