// Issue 48: a SEEKABLE directory job whose source runs on a real `holdfast agent`. The agent writes the archive (a
// full, then an incremental of the chain, for which the server sends it the chain's snapshot); the server stores the
// archive and its index as for a local source. Restores go to the agent with the server choosing every byte: the whole
// snapshot into a new folder (identical tree), one selected path only, and a damaged member failing the restore with
// nothing written.
import { createHash, randomBytes } from 'node:crypto';
import { link, mkdir, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentTestServer, type AgentTestServer, type TestAgent } from './support/agent-harness.js';

/** Every file of a tree, by relative path, with its SHA-256 (folders as `dir`). */
async function treeOf(root: string): Promise<Record<string, string>> {
  const tree: Record<string, string> = {};
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    const path = relative(root, join(entry.parentPath, entry.name));
    tree[path] = entry.isDirectory() ? 'dir' : createHash('sha256').update(await readFile(join(root, path))).digest('hex');
  }
  return tree;
}

describe('seekable archives of a folder on an agent', () => {
  let server: AgentTestServer;
  let agent: TestAgent;
  let folder: string;
  let storage: string;
  let sourceId: string;
  let storageId: string;
  const keys: string[] = [];

  const agentCalls = (method: string, from: number) =>
    agent.process.stdoutLines.slice(from).filter((line) => line.includes('"call started"') && line.includes(`"method":"${method}"`)).length;
  async function create(path: string, body: unknown): Promise<any> {
    const answer = await server.call('POST', path, body);
    expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201);
    return answer.body;
  }
  async function restore(file: string, target: string, extra: Record<string, unknown> = {}): Promise<any> {
    const answer = await server.call('POST', `/api/storage/${storageId}/restore`, { file, targetSourceId: sourceId, targetPath: target, ...extra });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return server.settled(answer.body.executionId);
  }
  const archives = async () => (await readdir(storage)).filter((name) => name.endsWith('.hfa') || name.endsWith('.hfa.enc')).sort();
  const sidecarOf = async (key: string) => JSON.parse(await readFile(join(storage, `${key}.meta.json`), 'utf8'));
  /** The archive of chain position `sequence` (0: the full) of the first job. */
  const keyAt = async (sequence: number) => {
    for (const key of keys) if (((await sidecarOf(key)).archive?.chain?.sequence ?? 0) === sequence) return key;
    throw new Error(`no archive at position ${sequence}`);
  };

  beforeAll(async () => {
    server = await startAgentTestServer();
    agent = await server.startAgent('archive-agent');
    folder = join(server.work, 'agent-tree');
    await mkdir(join(folder, 'nested', 'deeper'), { recursive: true });
    await writeFile(join(folder, 'readme.txt'), 'a folder on the agent\n');
    await writeFile(join(folder, 'nested', 'big.bin'), randomBytes(400_000));
    await writeFile(join(folder, 'nested', 'deeper', 'note.md'), '# deeper\n');
    // Walked after nested/: archived as a hard link to nested/deeper/note.md.
    await link(join(folder, 'nested', 'deeper', 'note.md'), join(folder, 'zlink.md'));
    storage = join(server.work, 'archive-storage');
    await mkdir(storage);
    sourceId = (await create('/api/adapters', { name: 'tree on agent', type: 'database', adapterId: 'directory', config: { paths: [folder] }, agentId: agent.id })).id;
    storageId = (await create('/api/adapters', { name: 'archive disk', type: 'storage', adapterId: 'local', config: { path: storage } })).id;
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  it('writes a full and two incremental archives on the agent, stored with their indexes', async () => {
    const job = await create('/api/jobs', {
      name: 'agent tree',
      schedule: '0 3 * * *',
      sourceId,
      compression: 'ZSTD',
      archiveFormat: 'SEEKABLE',
      fullEveryRuns: 10,
      destinations: [{ configId: storageId, priority: 0 }],
    });
    const changes = [
      async () => undefined,
      async () => writeFile(join(folder, 'added.txt'), 'added before run 2\n'),
      async () => {
        await unlink(join(folder, 'readme.txt'));
        await rename(join(folder, 'added.txt'), join(folder, 'nested', 'moved.txt'));
      },
    ];
    for (const change of changes) {
      await change();
      const from = agent.process.stdoutLines.length;
      const answer = await server.call('POST', `/api/jobs/${job.id}/run`, {});
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const run = await server.settled(answer.body.executionId);
      expect(run.status, JSON.stringify(run.logs?.slice(-6))).toBe('Success');
      expect(agentCalls('archiveDump', from)).toBe(1);
    }
    keys.push(...(await archives()));
    expect(keys).toHaveLength(3);
    for (const key of keys) expect((await stat(join(storage, `${key}.index.json`))).size).toBeGreaterThan(0);
    const sidecars = await Promise.all(keys.map(async (key) => JSON.parse(await readFile(join(storage, `${key}.meta.json`), 'utf8'))));
    expect(sidecars.map((sidecar) => sidecar.archive?.chain?.sequence ?? 0).sort()).toEqual([0, 1, 2]);
    // The incremental archives hold what changed, not the 400 kB that did not.
    const full = (await stat(join(storage, await keyAt(0)))).size;
    for (const sequence of [1, 2]) expect((await stat(join(storage, await keyAt(sequence)))).size).toBeLessThan(full / 4);
  }, 240_000);

  it('restores the newest snapshot whole into a new folder on the agent, identical', async () => {
    const newest = await keyAt(2);
    const target = join(server.work, 'restored-whole');
    const from = agent.process.stdoutLines.length;
    const restored = await restore(newest, target);
    expect(restored.status, JSON.stringify(restored.logs?.slice(-6))).toBe('Success');
    expect(agentCalls('archiveRestore', from)).toBe(1);
    const [root] = await readdir(target);
    // The tree as it is now: readme.txt deleted, added.txt moved, the hard link kept (content read from the full).
    expect(await treeOf(join(target, root!))).toEqual(await treeOf(folder));
    expect((await stat(join(target, root!, 'zlink.md'))).ino).toBe((await stat(join(target, root!, 'nested', 'deeper', 'note.md'))).ino);
  }, 120_000);

  it('restores one selected path only', async () => {
    const newest = await keyAt(2);
    const target = join(server.work, 'restored-one');
    const [root] = await readdir(join(server.work, 'restored-whole'));
    const restored = await restore(newest, target, { paths: [`${root}/nested/big.bin`] });
    expect(restored.status, JSON.stringify(restored.logs?.slice(-6))).toBe('Success');
    expect(await readdir(join(target, root!))).toEqual(['nested']);
    expect(await readdir(join(target, root!, 'nested'))).toEqual(['big.bin']);
    expect((await readFile(join(target, root!, 'nested', 'big.bin'))).equals(await readFile(join(folder, 'nested', 'big.bin')))).toBe(true);
    // A hard link alone: its target was not selected, so the server sends the target's bytes and it becomes a copy.
    const linkOnly = join(server.work, 'restored-link');
    const linked = await restore(newest, linkOnly, { paths: [`${root}/zlink.md`] });
    expect(linked.status, JSON.stringify(linked.logs?.slice(-6))).toBe('Success');
    expect(await readdir(join(linkOnly, root!))).toEqual(['zlink.md']);
    expect(await readFile(join(linkOnly, root!, 'zlink.md'), 'utf8')).toBe('# deeper\n');
  }, 120_000);

  it('restores the newest snapshot back to its original path on the agent after the files were lost', async () => {
    const before = await treeOf(folder);
    await rm(folder, { recursive: true });
    const answer = await server.call('POST', `/api/storage/${storageId}/restore`, { file: await keyAt(2), targetSourceId: sourceId, restoreToOriginalPaths: true, overwrite: true });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const restored = await server.settled(answer.body.executionId);
    expect(restored.status, JSON.stringify(restored.logs?.slice(-6))).toBe('Success');
    expect(await treeOf(folder)).toEqual(before);
  }, 120_000);

  it('writes and restores an encrypted seekable archive through the agent', async () => {
    const vault = await create('/api/vault', { name: 'agent archive key' });
    const job = await create('/api/jobs', {
      name: 'agent tree sealed',
      schedule: '0 3 * * *',
      sourceId,
      compression: 'GZIP',
      archiveFormat: 'SEEKABLE',
      encryptionProfileId: vault.id,
      destinations: [{ configId: storageId, priority: 0 }],
    });
    const answer = await server.call('POST', `/api/jobs/${job.id}/run`, {});
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const run = await server.settled(answer.body.executionId);
    expect(run.status, JSON.stringify(run.logs?.slice(-6))).toBe('Success');
    const sealed = (await archives()).find((name) => name.endsWith('.hfa.enc') && !keys.includes(name));
    expect(sealed).toBeDefined();
    // Sealed on the server: no path is readable in the stored index.
    expect((await readFile(join(storage, `${sealed}.index.json`))).includes(Buffer.from('big.bin'))).toBe(false);
    const target = join(server.work, 'restored-sealed');
    const restored = await restore(sealed!, target);
    expect(restored.status, JSON.stringify(restored.logs?.slice(-6))).toBe('Success');
    const [root] = await readdir(target);
    expect(await treeOf(join(target, root!))).toEqual(await treeOf(folder));
  }, 120_000);

  it('fails a restore whose archive member is damaged, leaving nothing written', async () => {
    const full = await keyAt(0);
    const index = await readFile(join(storage, `${full}.index.json`), 'utf8');
    const entries = JSON.parse(index.slice(index.indexOf('\n') + 1)).entries as Array<{ path: string; offset: number; length: number }>;
    const big = entries.find((entry) => entry.path.endsWith('nested/big.bin'))!;
    const archive = await readFile(join(storage, full));
    const at = big.offset + Math.floor(big.length / 2);
    archive[at] = archive[at]! ^ 0xff;
    await writeFile(join(storage, full), archive);
    const target = join(server.work, 'restored-damaged');
    const restored = await restore(full, target);
    expect(restored.status).toBe('Failed');
    // Checked on the agent as it extracted (the local path's check), in the restore's staging folder.
    expect(restored.error, JSON.stringify(restored.logs?.slice(-4))).toMatch(/content of ".*nested\/big\.bin" does not match its recorded size and SHA-256/);
    const left = await readdir(target, { recursive: true }).catch(() => [] as string[]);
    expect(left).toEqual([]);
    // The member ranges the agent received were in a temporary folder of its own, removed after each restore.
    expect((await readdir(tmpdir())).filter((name) => name.startsWith('holdfast-agent-archive-'))).toEqual([]);
  }, 120_000);
});
