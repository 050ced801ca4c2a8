// The spool folder and notices the change-log streams of source-postgres and source-mysql share.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeLogNotices, ChangeLogSpool } from '../src/index.js';

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

describe('ChangeLogSpool', () => {
  it('keeps its state across instances, links completed pieces into .ready once, and drops old snapshots', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hf-spool-'));
    folders.push(dir);
    const spool = new ChangeLogSpool<{ last?: string }>(dir, '.state.json');
    await spool.prepare();
    expect(await spool.readState()).toEqual({});
    await spool.updateState((state) => ({ ...state, last: 'piece-1' }));
    expect(await new ChangeLogSpool<{ last?: string }>(dir, '.state.json').readState()).toEqual({ last: 'piece-1' });
    await writeFile(join(dir, 'piece-1'), 'bytes');
    await spool.linkToReady('piece-1');
    await spool.linkToReady('piece-1');
    expect(await readdir(spool.readyDir)).toEqual(['piece-1']);
    await writeFile(join(spool.snapshotDir, 'old.partial.1'), 'x');
    await spool.prepare();
    expect(await readdir(spool.snapshotDir)).toEqual([]);
  });

  it('runs exclusive work one at a time, also after a failure', async () => {
    const spool = new ChangeLogSpool(tmpdir(), '.unused.json');
    const order: string[] = [];
    const slow = spool.exclusive(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      order.push('slow');
      throw new Error('failed');
    });
    const next = spool.exclusive(async () => order.push('next'));
    await expect(slow).rejects.toThrow('failed');
    await next;
    expect(order).toEqual(['slow', 'next']);
  });
});

describe('ChangeLogNotices', () => {
  it('keeps notices raised before the first listener for it, then delivers to every listener', () => {
    const notices = new ChangeLogNotices();
    notices.emit({ type: 'lag', bytes: 1 });
    const first: unknown[] = [];
    const second: unknown[] = [];
    notices.listen((notice) => first.push(notice));
    notices.listen((notice) => second.push(notice));
    notices.emit({ type: 'lag', bytes: 2 });
    expect(first).toEqual([{ type: 'lag', bytes: 1 }, { type: 'lag', bytes: 2 }]);
    expect(second).toEqual([{ type: 'lag', bytes: 2 }]);
  });
});
