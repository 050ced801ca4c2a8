// Issue 20: directory jobs writing seekable archives in incremental chains, end to end through the API on the real
// server (embedded database, local storage, the real directory source): seven runs with additions, changes,
// deletions and renames, each snapshot restored and compared with the tree as it was at that run; a chain member
// deleted by hand forces a full backup with the reason in the log; one file restored alone; the archive listing.
import { createHash, randomBytes } from 'node:crypto';
import { chmod, link, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rename, rm, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { copyFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creator, settledExecution } from './support/api-steps.js';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

/** What a tree looks like: per relative path its kind, mode, mtime (ms), content hash or link target, hard link group. */
type TreeState = Record<string, string>;

async function stateOf(root: string): Promise<TreeState> {
  const state: TreeState = {};
  const firstPathOfInode = new Map<number, string>();
  const visit = async (dir: string, relative: string) => {
    for (const name of (await readdir(dir)).sort()) {
      const path = join(dir, name);
      const rel = relative ? `${relative}/${name}` : name;
      const info = await lstat(path);
      const mode = (info.mode & 0o7777).toString(8);
      if (info.isSymbolicLink()) state[rel] = `symlink -> ${await readlink(path)}`;
      else if (info.isDirectory()) {
        state[rel] = `dir ${mode} ${Math.floor(info.mtimeMs)}`;
        await visit(path, rel);
      } else {
        const linked = info.nlink > 1 ? firstPathOfInode.get(info.ino) : undefined;
        if (info.nlink > 1 && !linked) firstPathOfInode.set(info.ino, rel);
        const hash = createHash('sha256').update(await readFile(path)).digest('hex').slice(0, 16);
        state[rel] = `file ${mode} ${Math.floor(info.mtimeMs)} ${hash}${linked ? ` linked to ${linked}` : ''}`;
      }
    }
  };
  await visit(root, '');
  return state;
}

describe('seekable archives: incremental chains of a directory job (issue 20)', () => {
  let server: FullServer;
  let admin: Caller;
  let work: string;
  let sourceDir: string;
  let storageDir: string;
  let storageId: string;
  let jobId: string;
  let vaultId: string;
  const runs: { key: string; state: TreeState; executionId: string }[] = [];
  const bigContent = randomBytes(3 * 1024 * 1024 + 17);

  const settled = (executionId: string): Promise<any> => settledExecution(server, admin, executionId);
  const create = (path: string, body: unknown) => creator(server, () => admin)(path, body);
  const runJob = async () => {
    const state = await stateOf(sourceDir);
    const answer = await server.call('POST', `/api/jobs/${jobId}/run`, admin, {});
    expect(answer.status).toBe(200);
    const run = await settled(answer.body.executionId);
    expect(run.status, JSON.stringify(run.logs?.slice(-4))).toBe('Success');
    runs.push({ key: run.path, state, executionId: answer.body.executionId });
    return run;
  };
  const restoreInto = async (file: string, target: string, extra: Record<string, unknown> = {}) => {
    const answer = await server.call('POST', `/api/storage/${storageId}/restore`, admin, { file, targetPath: target, ...extra });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return settled(answer.body.executionId);
  };
  // Changes between runs move mtimes forward by whole seconds, so "changed" never hides inside one clock tick.
  let clock = 1_700_000_000;
  const touch = async (path: string) => {
    clock += 10;
    await utimes(path, clock, clock);
  };
  const write = async (relative: string, content: string | Buffer) => {
    await writeFile(join(sourceDir, relative), content);
    await touch(join(sourceDir, relative));
  };

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'holdfast-seekable-'));
    sourceDir = join(work, 'src');
    storageDir = join(work, 'storage');
    await mkdir(join(sourceDir, 'docs', 'deep'), { recursive: true });
    await mkdir(join(sourceDir, 'empty'));
    await mkdir(storageDir);
    await write('readme.txt', 'hello\n');
    await write('docs/bücher 日本.txt', 'unicode name\n');
    await write('docs/deep/big.bin', bigContent);
    await write('docs/deep/random.bin', createHash('sha512').update('x').digest().toString('hex').repeat(40_000));
    await chmod(join(sourceDir, 'readme.txt'), 0o640);
    // A time before 1970: Node's utimes given a negative number would restore "now" instead.
    await writeFile(join(sourceDir, 'from-1969.txt'), 'old\n');
    await promisify(execFile)('touch', ['-m', '-d', '@-86400.250001', join(sourceDir, 'from-1969.txt')]);
    await symlink('docs/deep/big.bin', join(sourceDir, 'link-to-big'));
    await link(join(sourceDir, 'readme.txt'), join(sourceDir, 'readme-hardlink.txt'));

    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const source = await create('/api/adapters', { name: 'tree', type: 'database', adapterId: 'directory', config: { paths: [sourceDir] } });
    const storage = await create('/api/adapters', { name: 'disk', type: 'storage', adapterId: 'local', config: { path: storageDir } });
    storageId = storage.id;
    const vault = await create('/api/vault', { name: 'chain key' });
    vaultId = vault.id;
    const naming = await create('/api/naming-templates', { name: 'chained', pattern: '{job_name}_{chain}_yyyy-MM-dd_HH-mm-ss-SSS' });
    const job = await create('/api/jobs', {
      name: 'tree',
      schedule: '0 3 * * *',
      sourceId: source.id,
      compression: 'ZSTD',
      archiveFormat: 'SEEKABLE',
      fullEveryRuns: 10,
      encryptionProfileId: vault.id,
      namingTemplateId: naming.id,
      destinations: [{ configId: storage.id, priority: 0 }],
    });
    jobId = job.id;
    expect(job.archiveFormat).toBe('SEEKABLE');
    expect(job.fullEveryRuns).toBe(10);

    // Run 1: the full backup. Runs 2-7: additions, changes, deletions, renames, a new symlink, a mode change.
    await runJob();
    await write('added-1.txt', 'added in run 2\n');
    await write('docs/deep/random.bin', 'changed content in run 2\n');
    await runJob();
    await unlink(join(sourceDir, 'docs/bücher 日本.txt'));
    await rename(join(sourceDir, 'docs/deep/big.bin'), join(sourceDir, 'docs/big-renamed.bin'));
    await touch(join(sourceDir, 'docs'));
    await runJob();
    await mkdir(join(sourceDir, 'new-folder'));
    await write('new-folder/inside.txt', 'in a new folder\n');
    await symlink('../readme.txt', join(sourceDir, 'new-folder/up-link'));
    await runJob();
    await chmod(join(sourceDir, 'added-1.txt'), 0o600);
    await touch(join(sourceDir, 'added-1.txt'));
    await rm(join(sourceDir, 'empty'), { recursive: true });
    await runJob();
    await write('readme.txt', 'hello, changed through a hard link\n');
    // A chmod alone leaves size and mtime as they were: the snapshot must still carry the new mode.
    await chmod(join(sourceDir, 'docs/deep/random.bin'), 0o604);
    await runJob();
    await rename(join(sourceDir, 'new-folder'), join(sourceDir, 'renamed-folder'));
    await write('added-7.txt', 'last one\n');
    await runJob();
  }, 240_000);

  afterAll(async () => {
    await server?.close();
    await rm(work, { recursive: true, force: true });
  });

  it('names the runs by their chain position and stores an encrypted archive, its sealed index and its sidecar', async () => {
    expect(runs).toHaveLength(7);
    expect(runs[0]!.key).toMatch(/^tree_full_.*\.hfa\.enc$/);
    runs.slice(1).forEach((run, index) => expect(run.key).toMatch(new RegExp(`^tree_inc-${index + 1}_.*\\.hfa\\.enc$`)));
    const stored = await readdir(storageDir);
    for (const run of runs) {
      expect(stored).toContain(`${run.key}.index.json`);
      const sidecar = JSON.parse(await readFile(join(storageDir, `${run.key}.meta.json`), 'utf8'));
      expect(sidecar.archive).toMatchObject({ format: 'holdfast-archive', memberCompression: 'zstd' });
      const index = await readFile(join(storageDir, `${run.key}.index.json`));
      // Sealed: the index of an encrypted backup is HFENC, so no path is readable on storage.
      expect(index.subarray(0, 5).toString('latin1')).not.toBe('HOLDF');
      expect(index.includes(Buffer.from('readme'))).toBe(false);
    }
    const last = JSON.parse(await readFile(join(storageDir, `${runs[6]!.key}.meta.json`), 'utf8'));
    expect(last.archive.chain).toMatchObject({ sequence: 6, baseArchives: runs.slice(0, 6).map((run) => run.key) });
  });

  it('stores only what changed in an incremental run', async () => {
    const sizes = await Promise.all(runs.map(async (run) => (await lstat(join(storageDir, run.key))).size));
    // The full holds ~3 MiB of data; later runs hold a few small files plus headers and the index.
    for (const size of sizes.slice(1)) expect(size).toBeLessThan(sizes[0]! / 4);
  });

  it('restores every snapshot of the chain exactly as the tree was at that run', async () => {
    // Every run changed the tree, so restoring the wrong snapshot (or the newest for all) cannot pass.
    for (let position = 1; position < runs.length; position += 1) expect(runs[position]!.state).not.toEqual(runs[position - 1]!.state);
    for (const [position, run] of runs.entries()) {
      const target = join(work, `restored-${position + 1}`);
      const restore = await restoreInto(run.key, target);
      expect(restore.status, `run ${position + 1}: ${JSON.stringify(restore.logs?.slice(-3))}`).toBe('Success');
      expect(await stateOf(join(target, '0-src')), `snapshot of run ${position + 1}`).toEqual(run.state);
    }
  }, 180_000);

  it('restores an encrypted incremental snapshot with the recovery kit alone, outside Holdfast (acceptance 4)', async () => {
    const kitResponse = await fetch(`${server.url}/api/vault/${vaultId}/recovery-kit`, { headers: { cookie: admin.cookie! } });
    expect(kitResponse.status).toBe(200);
    // A folder outside the repository, so the kit cannot lean on Holdfast's packages: the kit, then the chain's files.
    const kitDir = await mkdtemp(join(tmpdir(), 'holdfast-kit-chain-'));
    try {
      await writeFile(join(kitDir, 'kit.tar'), Buffer.from(await kitResponse.arrayBuffer()));
      await promisify(execFile)('tar', ['-xf', join(kitDir, 'kit.tar'), '-C', kitDir]);
      const kitFiles = await readdir(kitDir, { recursive: true });
      const script = join(kitDir, kitFiles.find((name) => name.endsWith('holdfast-decrypt.mjs'))!);
      const keyFile = join(kitDir, kitFiles.find((name) => name.endsWith('holdfast-key.txt'))!);
      const downloads = join(kitDir, 'downloads');
      await mkdir(downloads);
      for (const run of runs.slice(0, 7)) {
        for (const suffix of ['', '.meta.json', '.index.json']) await copyFile(join(storageDir, `${run.key}${suffix}`), join(downloads, `${run.key}${suffix}`));
      }
      const out = join(kitDir, 'restored');
      await promisify(execFile)(process.execPath, [script, 'extract', '--key-file', keyFile, join(downloads, runs[6]!.key), out], { cwd: kitDir });
      expect(await stateOf(join(out, '0-src'))).toEqual(runs[6]!.state);
    } finally {
      await rm(kitDir, { recursive: true, force: true });
    }
  });

  it('lists an archive tree from its index, naming the backup of the chain that holds each file', async () => {
    const answer = await server.call('GET', `/api/storage/${storageId}/archive?file=${encodeURIComponent(runs[6]!.key)}`, admin);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const byPath = new Map(answer.body.entries.map((entry: any) => [entry.path, entry]));
    expect(byPath.get('0-src/added-7.txt')).toMatchObject({ kind: 'file', size: 9, archive: runs[6]!.key });
    expect(byPath.get('0-src/renamed-folder/inside.txt')).toMatchObject({ kind: 'file', archive: runs[3]!.key });
    expect(byPath.get('0-src/docs/big-renamed.bin')).toMatchObject({ size: 3 * 1024 * 1024 + 17, archive: runs[0]!.key });
    expect(byPath.get('0-src/renamed-folder/up-link')).toMatchObject({ kind: 'symlink', target: '../readme.txt' });
    expect(byPath.has('0-src/empty')).toBe(false);
    expect(answer.body.renames).toContainEqual({ from: '0-src/new-folder/inside.txt', to: '0-src/renamed-folder/inside.txt' });
    expect(answer.body.requiredArchives[0]).toBe(runs[0]!.key);
  });

  it('answers the listing with 401 anonymously, 404 for a missing file and 400 for a plain backup', async () => {
    const file = encodeURIComponent(runs[0]!.key);
    expect((await server.call('GET', `/api/storage/${storageId}/archive?file=${file}`)).status).toBe(401);
    expect((await server.call('GET', `/api/storage/${storageId}/archive?file=nope.hfa`, admin)).status).toBe(404);
    await writeFile(join(storageDir, 'plain.tar'), 'x');
    await writeFile(join(storageDir, 'plain.tar.meta.json'), JSON.stringify({ formatVersion: 1, createdAt: new Date().toISOString(), sha256: 'a'.repeat(64) }));
    const plain = await server.call('GET', `/api/storage/${storageId}/archive?file=plain.tar`, admin);
    expect(plain.status).toBe(400);
    expect(plain.body.error).toMatch(/not a seekable archive/);
  });

  it('restores one file alone from the middle of the chain', async () => {
    const target = join(work, 'one-file');
    const restore = await restoreInto(runs[6]!.key, target, { paths: ['0-src/docs/big-renamed.bin'] });
    expect(restore.status, JSON.stringify(restore.logs?.slice(-3))).toBe('Success');
    const restored = await readFile(join(target, '0-src/docs/big-renamed.bin'));
    expect(restored.equals(bigContent)).toBe(true);
    expect(await readdir(join(target, '0-src'))).toEqual(['docs']);
    expect(await readdir(join(target, '0-src/docs'))).toEqual(['big-renamed.bin']);
  });

  it('refuses a decrypted download of a directory archive, explaining why', async () => {
    const answer = await server.call('POST', `/api/storage/${storageId}/download-url`, admin, { file: runs[0]!.key });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(/holds files/);
  });

  it('makes the next run a full backup, saying why, when a chain member was deleted by hand', async () => {
    await rm(join(storageDir, runs[3]!.key));
    const run = await runJob();
    expect(run.path).toMatch(/^tree_full_/);
    const reason = run.logs.map((line: any) => line.message).find((message: string) => message.startsWith('seekable archive: full backup'));
    expect(reason).toContain(`${runs[3]!.key}, which the chain depends on, is missing on disk`);
    const target = join(work, 'after-forced-full');
    const restore = await restoreInto(run.path, target);
    expect(restore.status).toBe('Success');
    expect(await stateOf(join(target, '0-src'))).toEqual(runs[7]!.state);
  }, 120_000);

  it('test-restores the newest incremental snapshot into a scratch folder and checks its files against the backup', async () => {
    const scratch = join(work, 'scratch');
    await mkdir(scratch);
    const update = await server.call('PUT', `/api/jobs/${jobId}`, admin, { testRestore: { target: { type: 'directory', path: scratch } } });
    expect(update.status, JSON.stringify(update.body)).toBe(200);
    await write('for-the-test-restore.txt', 'recorded in the figures\n');
    const backup = await runJob();
    expect(backup.path).toMatch(/^tree_inc-1_/);
    const trigger = await server.call('POST', `/api/jobs/${jobId}/test-restore`, admin, {});
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(200);
    const run = await settled(trigger.body.executionId);
    expect(run.status, JSON.stringify(run.logs?.slice(-5))).toBe('Success');
    const checks = run.logs.map((line: any) => line.message).filter((message: string) => message.startsWith('check '));
    // The figures come from the archive's index at backup time: the restored count and size must match them.
    expect(checks.some((message: string) => message.startsWith('check file count: ok'))).toBe(true);
    expect(checks.some((message: string) => message.startsWith('check total size: ok'))).toBe(true);
    expect(checks.every((message: string) => message.includes(': ok'))).toBe(true);
    expect(await readdir(scratch)).toEqual([]);
    await server.call('PUT', `/api/jobs/${jobId}`, admin, { testRestore: null });
  }, 120_000);

  it('refuses archive settings that cannot work with 400, changing nothing', async () => {
    const before = (await server.call('GET', `/api/jobs/${jobId}`, admin)).body;
    const cases: [unknown, RegExp][] = [
      [{ archiveFormat: 'PLAIN' }, /incremental chains need archiveFormat SEEKABLE/],
      [{ compression: 'BROTLI' }, /not BROTLI/],
      [{ fullEveryRuns: 1 }, /fullEveryRuns/],
      [{ archiveFormat: 'ZIP' }, /archiveFormat/],
    ];
    for (const [body, message] of cases) {
      const answer = await server.call('PUT', `/api/jobs/${jobId}`, admin, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error).toMatch(message);
    }
    expect((await server.call('GET', `/api/jobs/${jobId}`, admin)).body).toEqual(before);
  });
});
