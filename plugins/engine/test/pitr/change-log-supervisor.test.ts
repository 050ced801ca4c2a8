import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ORM_DATABASE } from '@holdfast/orm-port';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANGE_LOG_LOCK_CLASS, changeLogLockKey } from '../../src/pitr/job-leases.js';
import { InMemoryJobCatalog } from '../support/doubles.js';
import { createTarget, type TestDatabaseTarget } from '../support/harness.js';
import { refusing, scriptedLog, scriptedLogs } from './pitr-doubles.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const seg = (n: number) => `00000001000000000000000${n}`;
const JOB = 'job-lease';

describe('one process streams each job (test double source, PostgreSQL, two engines on one database)', () => {
  let target: TestDatabaseTarget;
  let otherDataDir: string;
  let dest: string;
  const catalog = new InMemoryJobCatalog();
  const servers: PitrServer[] = [];
  const dataDirs = new Map<PitrServer, string>();
  const holderOf = async () => {
    const row = await servers[0]!.changeLogs.streamOf(JOB);
    return servers.find((server) => server.engine().processId === row?.processId);
  };

  beforeAll(async () => {
    scriptedLogs.clear();
    Object.assign(refusing, { on: false, attempts: 0 });
    target = await createTarget('postgresql');
    otherDataDir = await mkdtemp(join(tmpdir(), 'holdfast-engine-b-'));
    dest = await mkdtemp(join(tmpdir(), 'hf-pitr-lease-'));
    servers.push(await startPitrServer(target, { catalog }));
    servers.push(await startPitrServer({ ...target, dataDir: otherDataDir }, { catalog }));
    dataDirs.set(servers[0]!, target.dataDir).set(servers[1]!, otherDataDir);
    catalog.addConfig({ configId: 'pg', name: 'Cluster', kind: 'source', adapterId: 'pitr-double', config: {} });
    catalog.addConfig({ configId: 'dest', name: 'Disk', kind: 'storage', adapterId: 'refusing', config: { path: dest } });
    catalog.addJob({ id: JOB, name: 'lease' }, 'pg', [{ configId: 'dest' }]);
  });

  afterAll(async () => {
    // A failed test may leave the storage refusing: closing would wait on its retries (CI's hook timed out).
    refusing.on = false;
    for (const server of servers) await server.close().catch(() => undefined);
    await target.drop();
    await rm(otherDataDir, { recursive: true, force: true });
    await rm(dest, { recursive: true, force: true });
  });

  it('only the lease holder streams; losing the lease stops it at once; closing the holder hands the job to the other', async () => {
    const log = scriptedLog(JOB);
    await until('a stream to open', () => log.opens.length >= 1);
    // Both supervisors passed many times (every 200 ms): still one stream open. (On the shared CI server the lease's
    // session can be cut by other files' work, so the holder may have closed and reopened: never two open at once.)
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(log.opens.length - log.closes.length).toBe(1);
    const holder = (await until('the holder', holderOf))!;
    expect(holder).toBeDefined();
    expect(log.opens.at(-1)).toBe(join(dataDirs.get(holder)!, 'pitr-spool', JOB));
    await log.emit({ name: seg(3), bytes: randomBytes(2048), coversUntil: new Date('2026-12-06T03:00:00Z') });
    await until('segment 3 archived', () => log.archived.length === 1);

    // The lease's session dies (a network cut, an administrator): that archiver stops, and a process takes the job again.
    const knex = servers[0]!.handle.container.resolve(ORM_DATABASE).em().getKnex();
    const [opensBefore, closesBefore] = [log.opens.length, log.closes.length];
    const killed = await knex.raw('SELECT pg_terminate_backend(pid) AS ok FROM pg_locks WHERE locktype = ? AND classid = ?::bigint::oid AND objid = ?::bigint::oid AND objsubid = 2', ['advisory', CHANGE_LOG_LOCK_CLASS, changeLogLockKey(JOB)]);
    expect(killed.rows).toEqual([{ ok: true }]);
    await until('the archiver to stop', () => log.closes.length === closesBefore + 1, 5_000);
    await until('a stream to open again', () => log.opens.length === opensBefore + 1);

    // A piece the current holder cannot store stays pending in the spool; closing the holder hands it over.
    refusing.on = true;
    const held = await log.emit({ name: seg(4), bytes: randomBytes(2048), coversUntil: new Date('2026-12-06T03:00:10Z') });
    await until('a refused attempt', () => refusing.attempts >= 2);
    expect(existsSync(held.path)).toBe(true);
    expect(log.archived.some((piece) => piece.name === seg(4))).toBe(false);
    const current = (await until('the holder', holderOf))!;
    await current.close();
    servers.splice(servers.indexOf(current), 1);
    const survivor = servers[0]!;
    await until('the other process to take over', async () => (await survivor.changeLogs.streamOf(JOB))?.processId === survivor.engine().processId);
    // The lease row names the survivor a moment before its stream opens (CI saw the old holder's spool still last).
    const survivorSpool = join(dataDirs.get(survivor)!, 'pitr-spool', JOB);
    await until('the survivor to open its stream', () => log.opens.at(-1) === survivorSpool);
    refusing.on = false;
    await until('segment 4 archived by the survivor', () => log.archived.some((piece) => piece.name === seg(4)));
    expect((await readFile(join(dest, 'pitr', JOB, 'wal', '00000001', seg(4)))).length).toBe(2048);
    expect((await survivor.changeLogs.piecesOf(JOB)).map((piece) => piece.name)).toEqual([seg(3), seg(4)]);
  });
});
