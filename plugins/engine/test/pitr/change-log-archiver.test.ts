import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDecompressStream, createDecryptStream } from '../../src/codec/index.js';
import { TOKENS } from '@holdfast/kernel';
import { createTarget, type TestDatabaseTarget } from '../support/harness.js';
import { droppedStreams, refusing, scriptedLog, scriptedLogs } from './pitr-doubles.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const SEG1 = '000000010000000000000003';
const SEG2 = '000000010000000000000004';
const folder = (jobId: string) => join('pitr', jobId, 'wal', '00000001');

/** Decrypts and decompresses a stored piece: what a restore would feed the server. */
async function openStored(path: string, key: Buffer): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(Readable.from([await readFile(path)]), createDecryptStream({ key }), createDecompressStream('GZIP'), async function* (source) {
    for await (const chunk of source) chunks.push(chunk as Buffer);
  });
  return Buffer.concat(chunks);
}

/** Bytes that compress (WAL is mostly repetitive) with a random part, so a mix-up shows. */
const walBytes = (size: number) => Buffer.concat([randomBytes(1024), Buffer.alloc(size - 1024, 7)]);

describe('change-log archiving (test double source, libsql)', () => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let dirs: string[];
  const profileKey = randomBytes(32);

  beforeEach(async () => {
    scriptedLogs.clear();
    Object.assign(refusing, { on: false, attempts: 0 });
    target = await createTarget('sqlite');
    server = await startPitrServer(target);
    dirs = [await mkdtemp(join(tmpdir(), 'hf-pitr-a-')), await mkdtemp(join(tmpdir(), 'hf-pitr-b-'))];
    server.catalog.addConfig({ configId: 'pg', name: 'Cluster', kind: 'source', adapterId: 'pitr-double', config: {} });
    server.catalog.addConfig({ configId: 'dest-a', name: 'Disk A', kind: 'storage', adapterId: 'local', config: { path: dirs[0] } });
    server.catalog.addConfig({ configId: 'dest-b', name: 'Disk B', kind: 'storage', adapterId: 'local', config: { path: dirs[1] } });
  });

  afterEach(async () => {
    await server.close();
    await target.drop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('stores every piece compressed and encrypted at both destinations, and a newer piece supersedes the partial', async () => {
    server.catalog.addJob({ id: 'job-wal', name: 'cluster', compression: 'GZIP' }, 'pg', [{ configId: 'dest-a' }, { configId: 'dest-b' }], { profileId: 'vault', key: profileKey });
    const log = scriptedLog('job-wal');
    await until('the stream to open', () => log.opens.length === 1);
    expect(log.opens[0]).toBe(join(target.dataDir, 'pitr-spool', 'job-wal'));

    const first = walBytes(256 * 1024);
    await log.emit({ name: SEG1, bytes: first, coversUntil: new Date('2026-12-06T03:00:00Z') });
    await until('the first segment to be archived', () => log.archived.length === 1);
    for (const dir of dirs) {
      const stored = join(dir, folder('job-wal'), `${SEG1}.gz.enc`);
      expect((await readFile(stored)).subarray(0, 5).toString()).toBe('HFENC');
      expect((await openStored(stored, profileKey)).equals(first)).toBe(true);
    }

    const partialOne = walBytes(64 * 1024);
    const partialTwo = walBytes(96 * 1024);
    await log.emit({ name: SEG2, bytes: partialOne, partial: true, coversUntil: new Date('2026-12-06T03:00:10Z') });
    await until('the first partial', () => log.archived.length === 2);
    await log.emit({ name: SEG2, bytes: partialTwo, partial: true, coversUntil: new Date('2026-12-06T03:00:20Z') });
    await until('the second partial', () => log.archived.length === 3);
    for (const dir of dirs) {
      expect((await readdir(join(dir, folder('job-wal')))).sort()).toEqual([`${SEG1}.gz.enc`, `${SEG2}.partial.gz.enc`]);
      expect((await openStored(join(dir, folder('job-wal'), `${SEG2}.partial.gz.enc`), profileKey)).equals(partialTwo)).toBe(true);
    }
    const partialRows = (await server.changeLogs.piecesOf('job-wal')).filter((piece) => piece.partial);
    expect(partialRows).toHaveLength(1);
    expect(partialRows[0]).toMatchObject({ name: SEG2, plainSize: partialTwo.length, coversUntil: new Date('2026-12-06T03:00:20Z') });

    const complete = walBytes(256 * 1024);
    await log.emit({ name: SEG2, bytes: complete, coversUntil: new Date('2026-12-06T03:00:30Z') });
    await until('the completed segment', () => log.archived.length === 4);
    for (const dir of dirs) {
      expect((await readdir(join(dir, folder('job-wal')))).sort()).toEqual([`${SEG1}.gz.enc`, `${SEG2}.gz.enc`]);
      expect((await openStored(join(dir, folder('job-wal'), `${SEG2}.gz.enc`), profileKey)).equals(complete)).toBe(true);
    }
    const rows = await server.changeLogs.piecesOf('job-wal');
    expect(rows.map((row) => [row.name, row.partial, row.plainSize, row.destinations])).toEqual([
      [SEG1, false, first.length, ['dest-a', 'dest-b']],
      [SEG2, false, complete.length, ['dest-a', 'dest-b']],
    ]);
    const storedSize = (await readFile(join(dirs[0]!, folder('job-wal'), `${SEG2}.gz.enc`))).length;
    expect(rows[1]!.storedSize).toBe(storedSize);
    expect(rows[1]!.storedSize).toBeLessThan(complete.length);
    expect(rows[1]!.storageKey).toBe(`pitr/job-wal/wal/00000001/${SEG2}.gz.enc`);
    // The spool forgot what was archived.
    expect(await readdir(join(target.dataDir, 'pitr-spool', 'job-wal'))).toEqual([]);
    const stream = await server.changeLogs.streamOf('job-wal');
    expect(stream).toMatchObject({ processId: server.engine().processId, state: 'streaming', pid: process.pid });

    // Storage statistics count the log's bytes, but its pieces are not backups (nor their times the newest backup's).
    const events = server.handle.container.resolve(TOKENS.EventBus);
    const snapshots: Array<{ configId: string; size: number; count: number; newestBackupAt: string | null }> = [];
    events.on('storage_snapshot', (snapshot) => void snapshots.push(snapshot));
    await events.emit('storage_stats_refresh', { reason: 'test' });
    const snapshot = await until('a snapshot of Disk A', () => snapshots.find((s) => s.configId === 'dest-a'));
    expect(snapshot).toMatchObject({ count: 0, newestBackupAt: null, size: rows[0]!.storedSize + rows[1]!.storedSize });
  });

  it('a destination that refuses holds the piece back: archived() waits, the spool keeps it, retries store it everywhere', async () => {
    server.catalog.addConfig({ configId: 'dest-down', name: 'Down', kind: 'storage', adapterId: 'refusing', config: { path: dirs[1] } });
    server.catalog.addJob({ id: 'job-retry', name: 'retry', compression: 'GZIP' }, 'pg', [{ configId: 'dest-a' }, { configId: 'dest-down' }], { profileId: 'vault', key: profileKey });
    refusing.on = true;
    const log = scriptedLog('job-retry');
    await until('the stream to open', () => log.opens.length === 1);
    const bytes = walBytes(128 * 1024);
    const segment = await log.emit({ name: SEG1, bytes, coversUntil: new Date('2026-12-06T03:00:00Z') });
    await until('three refused attempts', () => refusing.attempts >= 3);
    expect(log.archived).toEqual([]);
    expect(existsSync(segment.path)).toBe(true);
    expect(await server.changeLogs.piecesOf('job-retry')).toEqual([]);
    await until('the stream state to say retrying', async () => (await server.changeLogs.streamOf('job-retry'))?.state === 'retrying');

    refusing.on = false;
    await until('the piece to be archived', () => log.archived.length === 1);
    expect(existsSync(segment.path)).toBe(false);
    for (const dir of dirs) expect((await openStored(join(dir, folder('job-retry'), `${SEG1}.gz.enc`), profileKey)).equals(bytes)).toBe(true);
    expect((await server.changeLogs.piecesOf('job-retry'))[0]!.destinations).toEqual(['dest-a', 'dest-down']);
    await until('the stream state to say streaming', async () => (await server.changeLogs.streamOf('job-retry'))?.state === 'streaming');
  });

  it('turns the stream\'s notices into events, and a failed stream into pitr_stream_stopped and a restart', async () => {
    const events = server.handle.container.resolve(TOKENS.EventBus);
    const seen: Array<[string, unknown]> = [];
    for (const name of ['pitr_gap', 'pitr_slot_missing', 'pitr_stream_stopped'] as const) events.on(name, (payload) => void seen.push([name, payload]));
    server.catalog.addJob({ id: 'job-events', name: 'events' }, 'pg', [{ configId: 'dest-a' }]);
    const log = scriptedLog('job-events');
    await until('the stream to open', () => log.opens.length === 1);
    log.notice({ type: 'gap', message: 'segment 5 was removed before it was streamed', lastArchived: SEG1, nextAvailable: SEG2 });
    log.notice({ type: 'slot-missing', slot: 'holdfast_job_events', message: 'the slot was invalidated' });
    expect(seen).toEqual([
      ['pitr_gap', { jobId: 'job-events', jobName: 'events', message: 'segment 5 was removed before it was streamed', lastArchived: SEG1, nextAvailable: SEG2 }],
      ['pitr_slot_missing', { jobId: 'job-events', jobName: 'events', slot: 'holdfast_job_events', message: 'the slot was invalidated' }],
    ]);
    log.fail(new Error('server closed the replication connection'));
    await until('pitr_stream_stopped', () => seen.some(([name]) => name === 'pitr_stream_stopped'));
    expect(seen.at(-1)).toEqual(['pitr_stream_stopped', { jobId: 'job-events', jobName: 'events', message: 'The change-log stream of job "events" stopped: server closed the replication connection', error: 'server closed the replication connection' }]);
    await until('the stream to be opened again', () => log.opens.length === 2);
  });

  it('stops the archiver of a job that is deleted or no longer point-in-time, and streams nothing for other jobs', async () => {
    server.catalog.addConfig({ configId: 'logical', name: 'Logical', kind: 'source', adapterId: 'pitr-double', config: { pointInTime: false } });
    server.catalog.addJob({ id: 'job-logical', name: 'logical' }, 'logical', [{ configId: 'dest-a' }]);
    server.catalog.addJob({ id: 'job-gone', name: 'gone' }, 'pg', [{ configId: 'dest-a' }]);
    const log = scriptedLog('job-gone');
    await until('the stream to open', () => log.opens.length === 1);
    server.catalog.plans.delete('job-gone');
    await until('the stream to close', () => log.closes.length === 1);
    // A deleted job's slot is dropped and its stream row forgotten (docs/pitr.md "Retention"; wal-retention-slots.test.ts).
    await until('the slot of the deleted job dropped', () => droppedStreams.includes('job-gone'));
    await until('its stream row forgotten', async () => (await server.changeLogs.streamOf('job-gone')) === null);
    expect(scriptedLogs.has('job-logical')).toBe(false);
  });
});
