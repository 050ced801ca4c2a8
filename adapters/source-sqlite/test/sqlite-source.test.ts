import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type SourceAdapter } from '@holdfast/sdk';
import { listChildProcesses, waitForNoNewChildren } from '@holdfast/testkit';
import definition from '../src/index.js';
import { contents, createDatabase, query, removeAll, startWriter, tempDir } from './helpers.js';

let dir: string;
let staging: string;
let big: string;

function source(overrides: Record<string, unknown> = {}): SourceAdapter {
  // A staging directory of our own proves the temp copy is removed afterwards.
  return instantiateAdapter(container, definition, { path: big, tempDirectory: staging, ...overrides });
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(stream, new Writable({ write: (chunk: Buffer, _e, cb) => (chunks.push(chunk), cb()) }));
  return Buffer.concat(chunks);
}

const signal = () => new AbortController().signal;
const integrity = (file: string) => query<{ integrity_check: string }>(file, 'PRAGMA integrity_check')[0]?.integrity_check;

beforeAll(async () => {
  dir = await tempDir('suite');
  staging = join(dir, 'staging');
  await import('node:fs/promises').then((fs) => fs.mkdir(staging));
  big = join(dir, 'big.sqlite');
  createDatabase(big, 60_000); // ~25 MiB: the backup takes long enough for the writer to commit meanwhile
});

afterAll(() => removeAll(dir));

describe('source-sqlite', () => {
  it('detects the SQLite version of the CLI and names the file', async () => {
    const adapter = source();
    const cli = execFileSync('sqlite3', ['-version'], { encoding: 'utf8' }).split(' ')[0];
    expect(await adapter.detectVersion()).toEqual({ version: cli, edition: 'SQLite' });
    expect(await adapter.listDatabases()).toEqual([big]);
    expect((await adapter.check()).ok).toBe(true);
  });

  for (const journalMode of ['wal', 'delete'] as const) {
    it(`backs up (${journalMode} journal) while another process keeps writing; the restore holds every row committed before`, async () => {
      const file = join(dir, `live-${journalMode}.sqlite`);
      createDatabase(file, 60_000, journalMode);
      const writer = startWriter(file);
      try {
        // Let the writer get going, then note what is committed before the backup begins.
        for (let i = 0; i < 100 && query<{ n: number }>(file, 'SELECT max(id) AS n FROM items')[0]!.n <= 60_000; i++) await new Promise((r) => setTimeout(r, 10));
        const committedBefore = query<{ n: number }>(file, 'SELECT max(id) AS n FROM items')[0]!.n;
        expect(committedBefore).toBeGreaterThan(60_000);
        const adapter = source({ path: file });
        const dump = await adapter.dump({ databases: [], signal: signal() });
        const bytes = await collect(dump.stream);
        expect((await dump.done).bytes).toBe(bytes.length);
        expect(bytes.subarray(0, 16).toString('latin1')).toBe('SQLite format 3\0');
        await writer.stop();
        const writtenAfter = query<{ n: number }>(file, 'SELECT max(id) AS n FROM items')[0]!.n;

        const target = join(dir, `restored-${journalMode}.sqlite`);
        await adapter.restore(Readable.from([bytes]), { target: { path: target }, signal: signal() });
        expect(integrity(target)).toBe('ok');
        const restoredMax = query<{ n: number; c: number }>(target, 'SELECT max(id) AS n, count(*) AS c FROM items')[0]!;
        // A consistent snapshot: every row committed before the backup, ids without gaps, nothing from the future.
        expect(restoredMax.n).toBeGreaterThanOrEqual(committedBefore);
        expect(restoredMax.c).toBe(restoredMax.n);
        expect(restoredMax.n).toBeLessThanOrEqual(writtenAfter);
        expect(contents(target, `WHERE id <= ${restoredMax.n}`)).toEqual(contents(file, `WHERE id <= ${restoredMax.n}`));
        expect(writtenAfter).toBeGreaterThan(committedBefore);
      } finally {
        await writer.stop().catch(() => undefined);
      }
      expect(readdirSync(staging)).toEqual([]);
    });
  }

  it('restoring over an existing file replaces it and removes the previous one once the new one is verified', async () => {
    const small = join(dir, 'small.sqlite');
    createDatabase(small, 50);
    const target = join(dir, 'replace-me.sqlite');
    createDatabase(target, 5);
    const adapter = source({ path: small });
    const dump = await adapter.dump({ databases: [small], signal: signal() });
    const bytes = await collect(dump.stream);
    expect(await adapter.restore(Readable.from([bytes]), { target: { path: target }, signal: signal() })).toEqual({ warnings: [] });
    expect(contents(target)).toEqual(contents(small));
    expect(readdirSync(dir).filter((name) => name.startsWith('replace-me') || name.includes('holdfast-restore'))).toEqual(['replace-me.sqlite']);

    // keepPreviousFile keeps the replaced database as <target>.previous.
    const before = contents(target);
    createDatabase(join(dir, 'other.sqlite'), 7);
    const other = await collect((await source({ path: join(dir, 'other.sqlite') }).dump({ databases: [], signal: signal() })).stream);
    const result = await source({ keepPreviousFile: true }).restore(Readable.from([other]), { target: { path: target }, signal: signal() });
    expect(result.warnings).toEqual([`the replaced database was kept as ${target}.previous`]);
    expect(contents(`${target}.previous`)).toEqual(before);
    expect(contents(target).items).toHaveLength(7);
  });

  it('a corrupted backup fails PRAGMA integrity_check and leaves the target untouched', async () => {
    const small = join(dir, 'corrupt-src.sqlite');
    createDatabase(small, 400);
    const bytes = await collect((await source({ path: small }).dump({ databases: [], signal: signal() })).stream);
    // Scribble over a page in the middle (b-tree content), keeping the header valid.
    const broken = Buffer.from(bytes);
    broken.fill(0x5a, 4096 * 3 + 100, 4096 * 3 + 1500);
    const target = join(dir, 'keep-me.sqlite');
    createDatabase(target, 3);
    const original = await readFile(target);
    const error = await source().restore(Readable.from([broken]), { target: { path: target }, signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toMatch(/^\[source-sqlite\] (the restored file .* failed PRAGMA integrity_check|PRAGMA integrity_check of .* failed)/);
    expect(await readFile(target)).toEqual(original);
    expect(readdirSync(dir).filter((name) => name.includes('holdfast-restore') || name.endsWith('.previous'))).toEqual([`replace-me.sqlite.previous`]);
  });

  it('refuses a backup that is not an SQLite file', async () => {
    const target = join(dir, 'never.sqlite');
    await expect(source().restore(Readable.from([Buffer.from('hello, not sqlite')]), { target: { path: target }, signal: signal() })).rejects.toThrow(
      /the backup is not an SQLite database file/,
    );
    expect(readdirSync(dir).filter((name) => name.includes('never'))).toEqual([]);
  });

  it('a missing file, a non-database file and a missing sqlite3 each reject the dump before any byte', async () => {
    const missing = await source({ path: join(dir, 'nope.sqlite') }).dump({ databases: [], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(missing) && missing.code).toBe('NOT_FOUND');
    expect((missing as Error).message).toBe(`[source-sqlite] database file ${join(dir, 'nope.sqlite')} does not exist`);
    // The CLI would have created an empty database there; it must not.
    expect(readdirSync(dir)).not.toContain('nope.sqlite');

    const text = join(dir, 'text.txt');
    await writeFile(text, 'just text, long enough to be read as a header '.repeat(100));
    const notDb = await source({ path: text }).dump({ databases: [], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(notDb) && notDb.code).toBe('CONFIG');
    expect((notDb as Error).message).toMatch(/file is not a database/);

    const noTool = await source({ binDirectory: '/nonexistent/holdfast-bin' }).dump({ databases: [], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(noTool) && noTool.code).toBe('CONFIG');
    expect((noTool as Error).message).toMatch(/\/nonexistent\/holdfast-bin\/sqlite3 was not found/);

    const other = await source().dump({ databases: ['/srv/other.sqlite'], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(other) && other.code).toBe('NOT_FOUND');
    expect(readdirSync(staging)).toEqual([]);
  });

  it('a database locked beyond the busy timeout fails with TRANSIENT; aborting a waiting backup kills sqlite3 and removes the copy', async () => {
    const file = join(dir, 'locked.sqlite');
    createDatabase(file, 100, 'delete');
    // Another process holds an exclusive lock, so the backup waits on it: a dump that is certainly still running.
    const locker = spawn('sqlite3', [file], { stdio: ['pipe', 'ignore', 'ignore'] });
    // With a busy timeout: the probe below reads the file, and a BEGIN EXCLUSIVE meeting its shared lock would fail at
    // once and leave no lock at all.
    locker.stdin.write('.timeout 10000\nBEGIN EXCLUSIVE;\n');
    try {
      for (let i = 0; i < 100 && spawnSync('sqlite3', [file, 'SELECT 1 FROM items LIMIT 1']).status === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(spawnSync('sqlite3', [file, 'SELECT 1 FROM items LIMIT 1'], { encoding: 'utf8' }).stderr).toMatch(/database is locked/);

      const locked = await source({ path: file, busyTimeoutSeconds: 1 }).dump({ databases: [], signal: signal() }).catch((e: unknown) => e);
      expect(isAdapterError(locked) && locked.code).toBe('TRANSIENT');
      expect((locked as Error).message).toMatch(/database is locked/);

      const before = await listChildProcesses();
      const controller = new AbortController();
      const pending = source({ path: file, busyTimeoutSeconds: 60 }).dump({ databases: [], signal: controller.signal });
      pending.catch(() => undefined);
      const backupRunning = async () => {
        for (const pid of await listChildProcesses()) {
          if ((await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).includes('.backup')) return true;
        }
        return false;
      };
      for (let i = 0; i < 500 && !(await backupRunning()); i++) await new Promise((r) => setTimeout(r, 20));
      expect(await backupRunning()).toBe(true);
      controller.abort();
      const error = await pending.catch((e: unknown) => e);
      expect(isAdapterError(error) && error.code).toBe('ABORTED');
      expect(await waitForNoNewChildren(before)).toEqual([]);
      expect(readdirSync(staging)).toEqual([]);
    } finally {
      locker.kill('SIGKILL');
    }
  });
});
