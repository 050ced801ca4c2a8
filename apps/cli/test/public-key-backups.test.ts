// Issue 45: backups of a public-key (age) profile from the CLI. `backups download --identity key.txt` fetches the
// age file as stored (decrypt: false, the key stays on this machine) and decrypts it here to what Debian's age
// gives; a wrong key fails with a message and leaves no output. `backups restore --identity` sends the key with
// that one restore, which then succeeds.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startRemoteServer, type RemoteServer } from './support/remote-server.js';

let server: RemoteServer;
let work: string;
let storageId: string;
let backupPath: string;
let key: string;

/** `age-keygen -o <file>`: the owner's tool makes the key pair; answers the recipient. */
function ageKeygen(file: string): string {
  const result = spawnSync('age-keygen', ['-o', file], { encoding: 'utf8' });
  if (result.error || result.status !== 0) throw new Error('age-keygen is missing: run `npm run test:services` (as root) or `apt-get install -y age`');
  return /age1[0-9a-z]+/.exec(result.stderr)![0];
}

beforeAll(async () => {
  server = await startRemoteServer();
  work = await mkdtemp(join(tmpdir(), 'holdfast-cli-age-'));
  for (const dir of ['source', 'storage']) await mkdir(join(work, dir));
  await writeFile(join(work, 'source', 'ledger.txt'), 'debit credit balance\n'.repeat(5000));
  const recipient = ageKeygen(join(work, 'key.txt'));
  ageKeygen(join(work, 'wrong.txt'));
  const { admin } = server;
  const adapter = (body: Record<string, unknown>) => admin.unwrap(admin.api.POST('/api/adapters', { body: body as never }));
  const source = await adapter({ name: 'files', type: 'database', adapterId: 'directory', config: { paths: [join(work, 'source')] } });
  const storage = await adapter({ name: 'disk', type: 'storage', adapterId: 'local', config: { path: join(work, 'storage') } });
  storageId = storage.id;
  const profile = await admin.unwrap(admin.api.POST('/api/vault', { body: { name: 'offline key', publicKey: recipient } }));
  const job = await admin.unwrap(
    admin.api.POST('/api/jobs', {
      body: { name: 'ledger', schedule: '0 3 * * *', sourceId: source.id, compression: 'GZIP', encryptionProfileId: profile.id, destinations: [{ configId: storage.id, priority: 0 }] },
    }),
  );
  key = await server.issueKey(['jobs:execute', 'history:read', 'storage:read', 'storage:download', 'storage:restore']);
  const run = await runCli(['jobs', 'run', job.id, '--wait'], { HOLDFAST_URL: server.url, HOLDFAST_API_KEY: key });
  expect(run.stdout, run.stderr).toMatch(/ Success$/);
  backupPath = (await readdir(join(work, 'storage'))).find((name) => name.endsWith('.tar.gz.enc'))!;
  expect(backupPath).toBeDefined();
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const cli = (args: string[]) => runCli(args, { HOLDFAST_URL: server.url, HOLDFAST_API_KEY: key });

describe('holdfast backups download|restore --identity (public-key profile)', () => {
  it('decrypts a download on this machine to the bytes age gives, and a wrong key leaves no file', async () => {
    const saved = join(work, 'ledger.tar.gz');
    const download = await cli(['backups', 'download', storageId, backupPath, '--identity', join(work, 'key.txt'), '-o', saved]);
    expect(download.code, download.stderr).toBe(0);
    const byAge = spawnSync('age', ['-d', '-i', join(work, 'key.txt'), join(work, 'storage', backupPath)]);
    expect(byAge.status).toBe(0);
    expect((await readFile(saved)).equals(byAge.stdout)).toBe(true);
    // The server was asked for the file as stored: the key never left this machine.
    const audit = await server.admin.unwrap(server.admin.api.GET('/api/audit', { params: { query: { resource: 'storage' } } } as never));
    const grant = (audit as { entries: Array<{ action: string; details: string | null }> }).entries.find((entry) => entry.action === 'storage.download-url');
    expect(JSON.parse(grant!.details!)).toMatchObject({ decrypt: false });

    const wrongTarget = join(work, 'wrong.tar.gz');
    const wrong = await cli(['backups', 'download', storageId, backupPath, '--identity', join(work, 'wrong.txt'), '-o', wrongTarget]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/wrong key/);
    expect(existsSync(wrongTarget)).toBe(false);

    const notAKey = await cli(['backups', 'download', storageId, backupPath, '--identity', join(work, 'source', 'ledger.txt')]);
    expect(notAKey.code).toBe(10);
    expect(notAKey.stderr).toMatch(/--identity: .*AGE-SECRET-KEY-1/);
  }, 60_000);

  it('restores with the key file; without it the server refuses and names privateKey', async () => {
    const target = join(work, 'restored');
    const refused = await cli(['backups', 'restore', storageId, backupPath, '--target-path', target, '--wait']);
    expect(refused.code).toBe(10);
    expect(refused.stderr).toMatch(/privateKey/);
    const restore = await cli(['backups', 'restore', storageId, backupPath, '--target-path', target, '--identity', join(work, 'key.txt'), '--wait']);
    expect(restore.stdout, restore.stderr).toMatch(/ Success$/);
    const restored = (await readdir(target, { recursive: true })).find((name) => name.endsWith('ledger.txt'));
    expect(await readFile(join(target, restored!), 'utf8')).toBe(await readFile(join(work, 'source', 'ledger.txt'), 'utf8'));
  }, 60_000);
});
