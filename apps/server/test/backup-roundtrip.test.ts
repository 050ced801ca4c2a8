// End to end through the whole product: catalog configuration over HTTP, a run triggered with an API key, the
// engine's one-pass pipeline (pg_dump -> gzip -> encryption -> SFTP + local at once), a restore through the API, and
// the recovery kit decrypting a backup without Holdfast.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';
import { databaseName, dropDatabase, seedDatabase, tableDigests } from './support/postgres-data.js';

const run = promisify(execFile);
const SSHD = JSON.parse(await readFile('/tmp/holdfast-test-services/sshd/sshd.json', 'utf8')) as {
  host: string;
  port: number;
  user: string;
  password: string;
  home: string;
};

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Polls an execution until it leaves Pending/Running. */
async function settled(server: FullServer, caller: Caller, executionId: string, timeoutMs = 120_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await server.call('GET', `/api/executions/${executionId}?includeLogs=true`, caller);
    expect(answer.status).toBe(200);
    if (!['Pending', 'Running'].includes(answer.body.data.status)) return answer.body.data;
    if (Date.now() > deadline) throw new Error(`execution ${executionId} still ${answer.body.data.status}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe.each(['sqlite', 'postgresql'] as const)('backup and restore through the API on %s', (dialect) => {
  const databases: string[] = [];
  const directories: string[] = [];
  let server: FullServer | undefined;

  afterAll(async () => {
    await server?.close();
    await Promise.all(databases.map(dropDatabase));
    await Promise.all(directories.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('backs up 100k rows to SFTP and a local directory at once, restores them, and the recovery kit decrypts the file', async () => {
    server = await startFullServer(dialect);
    const admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const source = databaseName('src');
    databases.push(source);
    await seedDatabase(source, 100_000);
    const expected = await tableDigests(source);

    const localDir = await mkdtemp(join(tmpdir(), 'holdfast-e2e-local-'));
    const sftpRoot = `e2e-${dialect}-${Date.now()}`;
    directories.push(localDir, join(SSHD.home, sftpRoot));
    await run('install', ['-d', '-o', SSHD.user, '-g', SSHD.user, join(SSHD.home, sftpRoot)]);

    const create = async (path: string, body: unknown) => {
      const answer = await server!.call('POST', path, admin, body);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201);
      return answer.body;
    };
    // The production source is excluded from restores; restores go to a separate target configuration.
    const pg = await create('/api/adapters', { name: 'orders db', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' }, excludeFromRestore: true });
    const scratch = await create('/api/adapters', { name: 'restore target', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' } });
    const local = await create('/api/adapters', { name: 'local disk', type: 'storage', adapterId: 'local', config: { path: localDir } });
    const sftp = await create('/api/adapters', {
      name: 'offsite sftp',
      type: 'storage',
      adapterId: 'sftp',
      config: { host: SSHD.host, port: SSHD.port, username: SSHD.user, password: SSHD.password, root: `/home/${SSHD.user}/${sftpRoot}` },
    });
    const vault = await create('/api/vault', { name: 'offsite key' });
    const job = await create('/api/jobs', {
      name: 'orders',
      schedule: '0 3 * * *',
      sourceId: pg.id,
      databases: [source],
      compression: 'GZIP',
      encryptionProfileId: vault.id,
      destinations: [
        { configId: local.id, priority: 0 },
        { configId: sftp.id, priority: 1 },
      ],
    });

    const issued = await create('/api/api-keys', { name: 'ci pipeline', permissions: ['jobs:execute', 'history:read', 'storage:restore'] });
    const ci: Caller = { bearer: issued.key ?? issued.rawKey };
    const trigger = await server.call('POST', `/api/jobs/${job.id}/run`, ci, {});
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(200);
    expect(trigger.body).toMatchObject({ success: true, executionId: expect.any(String), message: expect.any(String) });
    const backup = await settled(server, ci, trigger.body.executionId);
    expect(backup.status, JSON.stringify(backup.logs?.slice(-5))).toBe('Success');
    expect(backup).toMatchObject({ jobId: job.id, jobName: 'orders', type: 'Backup', progress: 100, error: null });
    expect(backup.path).toMatch(/\.gz\.enc$/);

    // The trigger is audited as SPEC "Audit events" says: `execute` on `job`, with the trigger kind and the key id.
    const audit = await server.call('GET', '/api/audit?resource=job', admin);
    expect(audit.status).toBe(200);
    const execute = audit.body.entries.find((entry: { action: string }) => entry.action === 'execute');
    expect(execute).toMatchObject({ resource: 'job', resourceId: job.id, userId: expect.any(String) });
    expect(JSON.parse(execute.details)).toMatchObject({ trigger: 'api', apiKeyId: issued.apiKey.id });

    // Both destinations hold the same file and a sidecar naming its SHA-256.
    const localFiles = await readdir(localDir, { recursive: true });
    const fileName = localFiles.find((name) => name.endsWith('.gz.enc'))!;
    expect(localFiles).toContain(`${fileName}.meta.json`);
    const localPath = join(localDir, fileName);
    const remotePath = join(SSHD.home, sftpRoot, fileName);
    const sidecar = JSON.parse(await readFile(`${localPath}.meta.json`, 'utf8'));
    const remoteSidecar = JSON.parse(await readFile(`${remotePath}.meta.json`, 'utf8'));
    expect(await sha256Of(localPath)).toBe(sidecar.sha256);
    expect(await sha256Of(remotePath)).toBe(sidecar.sha256);
    expect(remoteSidecar.sha256).toBe(sidecar.sha256);
    expect(sidecar).toMatchObject({ locked: false, trigger: { type: 'Api', actor: 'ci pipeline' }, databases: [source], jobId: job.id });
    expect(sidecar.encryption).toMatchObject({ algorithm: 'AES-256-GCM', profileId: vault.id });
    // Regression (issue 10.12): the vault showed a 16-hex SHA-256 fingerprint, the sidecar a 32-hex HMAC one.
    expect(vault.keyFingerprint).toMatch(/^[0-9a-f]{32}$/);
    expect(sidecar.encryption.keyFingerprint).toBe(vault.keyFingerprint);
    expect(backup.size).toBe(sidecar.size);

    // Restoring into the excluded production source is refused, whether named or taken from the sidecar.
    const restored = databaseName('restored');
    databases.push(restored);
    const named = await server.call('POST', `/api/storage/${sftp.id}/restore`, ci, { file: fileName, database: restored, targetSourceId: pg.id });
    expect(named.status).toBe(409);
    expect(named.body.error).toMatch(/excluded from restores/);
    const implied = await server.call('POST', `/api/storage/${sftp.id}/restore`, ci, { file: fileName, database: restored });
    expect(implied.status).toBe(200);
    const refused = await settled(server, ci, implied.body.executionId);
    expect(refused.status).toBe('Failed');
    expect(refused.error).toMatch(/excluded from restores/);

    // Restore from the SFTP copy into a new database through the API.
    const restore = await server.call('POST', `/api/storage/${sftp.id}/restore`, ci, { file: fileName, database: restored, targetSourceId: scratch.id });
    expect(restore.status, JSON.stringify(restore.body)).toBe(200);
    const restoreRun = await settled(server, ci, restore.body.executionId);
    expect(restoreRun.status, JSON.stringify(restoreRun.logs?.slice(-5))).toBe('Success');
    expect(restoreRun.type).toBe('Restore');
    expect(await tableDigests(restored)).toEqual(expected);

    // The recovery kit decrypts the local copy without Holdfast; pg_restore of its output reproduces the data.
    const kitResponse = await fetch(`${server.url}/api/vault/${vault.id}/recovery-kit`, { headers: { cookie: admin.cookie! } });
    expect(kitResponse.status).toBe(200);
    const kitDir = await mkdtemp(join(tmpdir(), 'holdfast-e2e-kit-'));
    directories.push(kitDir);
    await writeFile(join(kitDir, 'kit.tar'), Buffer.from(await kitResponse.arrayBuffer()));
    await run('tar', ['-xf', join(kitDir, 'kit.tar'), '-C', kitDir]);
    const kitFiles = await readdir(kitDir, { recursive: true });
    const script = kitFiles.find((name) => name.endsWith('holdfast-decrypt.mjs'))!;
    const keyFile = kitFiles.find((name) => name.endsWith('holdfast-key.txt'))!;
    expect(kitFiles.some((name) => name.endsWith('README.md'))).toBe(true);
    expect(script).toBeDefined();
    expect(keyFile).toBeDefined();
    const dumpPath = join(kitDir, 'orders.dump');
    await run(process.execPath, [join(kitDir, script), '--key-file', join(kitDir, keyFile), '--out', dumpPath, localPath]);
    const fromKit = databaseName('kit');
    databases.push(fromKit);
    await run('createdb', ['-h', '127.0.0.1', '-U', 'root', fromKit]);
    await run('pg_restore', ['-h', '127.0.0.1', '-U', 'root', '--no-owner', '-d', fromKit, dumpPath]);
    expect(await tableDigests(fromKit)).toEqual(expected);
  });
});
