// Regression (issue 10.7): directory backups could not be restored through the API, because the route never passed a
// target. A directory job backs up a tree, then `POST /api/storage/:id/restore` restores it below a given folder and
// back to its original paths, each compared file by file; a crafted archive proves the tar-slip guards are reachable
// through the route; bad targets are refused with 400.
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Readable } from 'node:stream';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

/** Every regular file below `root` as relative path -> content. */
async function treeOf(root: string): Promise<Record<string, string>> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const tree: Record<string, string> = {};
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    tree[path.slice(root.length + 1)] = await readFile(path, 'utf8');
  }
  return tree;
}

async function settled(server: FullServer, caller: Caller, executionId: string): Promise<any> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await server.call('GET', `/api/executions/${executionId}?includeLogs=true`, caller);
    if (!['Pending', 'Running'].includes(answer.body.data.status)) return answer.body.data;
    if (Date.now() > deadline) throw new Error(`execution ${executionId} still ${answer.body.data.status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function craftedTar(members: { name: string; body: string }[]): Promise<Buffer> {
  const pack = tar.pack();
  for (const member of members) pack.entry({ name: member.name }, member.body);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack as unknown as Readable) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('directory backups restored through the API (regression, issue 10.7)', () => {
  let server: FullServer;
  let admin: Caller;
  let work: string;
  let sourceDir: string;
  let storageDir: string;
  let storageId: string;
  let backupFile: string;
  let original: Record<string, string>;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'holdfast-dir-restore-'));
    sourceDir = join(work, 'source');
    storageDir = join(work, 'storage');
    await mkdir(join(sourceDir, 'nested', 'deeper'), { recursive: true });
    await mkdir(storageDir);
    await writeFile(join(sourceDir, 'top.txt'), 'top level');
    await writeFile(join(sourceDir, 'nested', 'bücher.txt'), 'unicode name');
    await writeFile(join(sourceDir, 'nested', 'deeper', 'data.bin'), createHash('sha256').update('seed').digest('hex').repeat(5000));
    original = await treeOf(sourceDir);

    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const create = async (path: string, body: unknown) => {
      const answer = await server.call('POST', path, admin, body);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201);
      return answer.body;
    };
    const source = await create('/api/adapters', { name: 'files', type: 'database', adapterId: 'directory', config: { paths: [sourceDir] } });
    const storage = await create('/api/adapters', { name: 'disk', type: 'storage', adapterId: 'local', config: { path: storageDir } });
    storageId = storage.id;
    const job = await create('/api/jobs', { name: 'files', schedule: '0 3 * * *', sourceId: source.id, compression: 'GZIP', destinations: [{ configId: storage.id, priority: 0 }] });
    const run = await server.call('POST', `/api/jobs/${job.id}/run`, admin, {});
    expect(run.status).toBe(200);
    const backup = await settled(server, admin, run.body.executionId);
    expect(backup.status, JSON.stringify(backup.logs?.slice(-3))).toBe('Success');
    backupFile = (await readdir(storageDir, { recursive: true })).find((name) => /\.tar\.gz$/.test(name))!;
    expect(backupFile).toBeDefined();
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await rm(work, { recursive: true, force: true });
  });

  it('restores below a given folder, file for file', async () => {
    const target = join(work, 'restored-here');
    const answer = await server.call('POST', `/api/storage/${storageId}/restore`, admin, { file: backupFile, targetPath: target });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const run = await settled(server, admin, answer.body.executionId);
    expect(run.status, JSON.stringify(run.logs?.slice(-3))).toBe('Success');
    const [root] = await readdir(target);
    expect(root).toMatch(/^0-source$/);
    expect(await treeOf(join(target, root!))).toEqual(original);
  });

  it('restores back to the original paths after the files were lost', async () => {
    await rm(sourceDir, { recursive: true });
    const answer = await server.call('POST', `/api/storage/${storageId}/restore`, admin, { file: backupFile, restoreToOriginalPaths: true, overwrite: true });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const run = await settled(server, admin, answer.body.executionId);
    expect(run.status, JSON.stringify(run.logs?.slice(-3))).toBe('Success');
    expect(await treeOf(sourceDir)).toEqual(original);
  });

  it('fails a run that names no target with a message saying what to give', async () => {
    const answer = await server.call('POST', `/api/storage/${storageId}/restore`, admin, { file: backupFile });
    expect(answer.status).toBe(200);
    const run = await settled(server, admin, answer.body.executionId);
    expect(run.status).toBe('Failed');
    expect(run.error).toMatch(/target\.path .*target\.originalPaths/);
  });

  it('refuses bad targets with 400 naming the field, and queues nothing', async () => {
    const before = (await server.call('GET', '/api/history?type=Restore&limit=100', admin)).body;
    const cases = [
      { file: backupFile, targetPath: 'relative/path' },
      { file: backupFile, targetPath: '/tmp/a\u0000b' },
      { file: backupFile, targetPath: join(work, 'x'), restoreToOriginalPaths: true },
      { file: backupFile, restoreToOriginalPaths: 'yes' },
    ];
    for (const body of cases) {
      const answer = await server.call('POST', `/api/storage/${storageId}/restore`, admin, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error).toMatch(/targetPath|restoreToOriginalPaths/);
    }
    expect((await server.call('GET', '/api/history?type=Restore&limit=100', admin)).body).toEqual(before);
  });

  it('keeps the tar-slip guards through the route: crafted members are refused and nothing lands outside', async () => {
    const crafted = await craftedTar([
      { name: '../escaped.txt', body: 'outside' },
      { name: '0-source/../../climbed.txt', body: 'outside' },
      { name: '0-source/fine.txt', body: 'inside' },
    ]);
    const name = 'crafted.tar';
    const sidecar = JSON.parse(await readFile(join(storageDir, `${backupFile}.meta.json`), 'utf8'));
    await writeFile(join(storageDir, name), crafted);
    await writeFile(
      join(storageDir, `${name}.meta.json`),
      JSON.stringify({ ...sidecar, sha256: createHash('sha256').update(crafted).digest('hex'), size: crafted.length, compression: { codec: 'NONE' }, encryption: undefined }),
    );
    const target = join(work, 'slip', 'inner');
    const answer = await server.call('POST', `/api/storage/${storageId}/restore`, admin, { file: name, targetPath: target });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const run = await settled(server, admin, answer.body.executionId);
    expect(run.status).toBe('Partial');
    const warnings = run.logs.map((entry: { message: string }) => entry.message).join('\n');
    expect(warnings).toMatch(/\.\.\/escaped\.txt: refused/);
    expect(warnings).toMatch(/climbed\.txt: refused/);
    expect(await readFile(join(target, '0-source', 'fine.txt'), 'utf8')).toBe('inside');
    await expect(stat(join(work, 'slip', 'escaped.txt'))).rejects.toThrow();
    await expect(stat(join(work, 'escaped.txt'))).rejects.toThrow();
    await expect(stat(join(work, 'slip', 'climbed.txt'))).rejects.toThrow();
  });
});
