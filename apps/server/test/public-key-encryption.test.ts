// Issue 45, acceptance 2: a public-key (age) encryption profile. A backup is made through the whole product; nothing
// the server holds opens it (the system key, every profile key, every key-like string in the data directory and the
// database, the settings it serves); `age -d -i key.txt` (Debian's age) decrypts it to the bytes Holdfast's own
// decrypter gives with the private key; a restore needs the key, refuses a wrong one with a 400 that queues nothing,
// and with the right one restores every row. The key never lands in the database, the audit log or the data dir.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createAgeDecryptStream, createDecryptStream } from '@holdfast/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';
import { settledExecution } from './support/api-steps.js';
import { databaseName, dropDatabase, seedDatabase, tableDigests } from './support/postgres-data.js';

const run = promisify(execFile);

/** Runs bytes through a decrypting Transform; the error when it refuses. */
async function decryptWith(transform: Transform, bytes: Buffer): Promise<Buffer | Error> {
  const parts: Buffer[] = [];
  try {
    await pipeline(Readable.from([bytes]), transform, async (source: AsyncIterable<Buffer | string>) => {
      for await (const part of source) parts.push(Buffer.from(part));
    });
    return Buffer.concat(parts);
  } catch (error) {
    return error as Error;
  }
}

/** Every 32-byte value written as 64 hex or as base64 in `text`: what could be a key. */
function keyCandidates(text: string): Buffer[] {
  const found = new Map<string, Buffer>();
  for (const match of text.matchAll(/[0-9a-fA-F]{64}/g)) found.set(match[0].toLowerCase(), Buffer.from(match[0], 'hex'));
  for (const match of text.matchAll(/[A-Za-z0-9+/_-]{43}=?/g)) {
    const bytes = Buffer.from(match[0], /[-_]/.test(match[0]) ? 'base64url' : 'base64');
    if (bytes.length === 32) found.set(bytes.toString('hex'), bytes);
  }
  return [...found.values()];
}

/** 32 raw bytes as an age identity string, so every candidate is also tried as an X25519 private key. */
function asIdentity(bytes: Buffer): string {
  const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
  // Bech32 with the age secret-key prefix, written here independently of the product's encoder.
  const values: number[] = [];
  let accumulator = 0;
  let bits = 0;
  for (const byte of bytes) {
    accumulator = (accumulator << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      values.push((accumulator >>> bits) & 31);
    }
    accumulator &= (1 << bits) - 1;
  }
  if (bits > 0) values.push((accumulator << (5 - bits)) & 31);
  const prefix = 'age-secret-key-';
  const expanded = [...[...prefix].map((c) => c.charCodeAt(0) >> 5), 0, ...[...prefix].map((c) => c.charCodeAt(0) & 31)];
  const generators = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let checksum = 1;
  for (const value of [...expanded, ...values, 0, 0, 0, 0, 0, 0]) {
    const top = checksum >>> 25;
    checksum = ((checksum & 0x1ffffff) << 5) ^ value;
    for (let bit = 0; bit < 5; bit += 1) if ((top >>> bit) & 1) checksum ^= generators[bit]!;
  }
  checksum ^= 1;
  const tail = Array.from({ length: 6 }, (_, index) => (checksum >>> (5 * (5 - index))) & 31);
  return `${prefix}1${[...values, ...tail].map((value) => CHARSET[value]).join('')}`.toUpperCase();
}

describe.each(['sqlite', 'postgresql'] as const)('public-key (age) encryption profiles through the whole product on %s', (dialect) => {
  const databases: string[] = [];
  const directories: string[] = [];
  let server: FullServer;
  let admin: Caller;
  let keyDir: string;
  let identity: string;
  let recipient: string;

  beforeAll(async () => {
    const probe = spawnSync('age', ['--version']);
    if (probe.error || probe.status !== 0) throw new Error('the `age` binary is missing: run `npm run test:services` (as root) or `apt-get install -y age`');
    keyDir = await mkdtemp(join(tmpdir(), 'holdfast-age-key-'));
    directories.push(keyDir);
    // The key pair comes from Debian's age-keygen: the owner's tool, not Holdfast's code.
    const generated = spawnSync('age-keygen', ['-o', join(keyDir, 'key.txt')], { encoding: 'utf8' });
    expect(generated.status, generated.stderr).toBe(0);
    recipient = /age1[0-9a-z]+/.exec(generated.stderr)![0];
    identity = /AGE-SECRET-KEY-1[0-9A-Z]+/.exec(await readFile(join(keyDir, 'key.txt'), 'utf8'))![0];
    server = await startFullServer(dialect);
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
  });

  afterAll(async () => {
    await server?.close();
    await Promise.all(databases.map(dropDatabase));
    await Promise.all(directories.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('validates the public key: a bad one is a 400 naming body.publicKey, with key it is refused', async () => {
    for (const bad of ['age1notarecipient', identity, 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB', recipient.toUpperCase()]) {
      const answer = await server.call('POST', '/api/vault', admin, { name: 'bad', publicKey: bad });
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(JSON.stringify(answer.body)).toContain('publicKey');
      expect(JSON.stringify(answer.body)).not.toContain(identity);
    }
    const both = await server.call('POST', '/api/vault', admin, { name: 'both', publicKey: recipient, key: '00'.repeat(32) });
    expect(both.status).toBe(400);
    expect((await server.call('GET', '/api/vault', admin)).body).toEqual([]);
  });

  it('backs up with a public-key profile; only the private key opens the backup, and it restores', async () => {
    const create = async (path: string, body: unknown) => {
      const answer = await server.call('POST', path, admin, body);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201);
      return answer.body;
    };
    const source = databaseName('agesrc');
    databases.push(source);
    await seedDatabase(source, 5_000);
    const expected = await tableDigests(source);
    const localDir = await mkdtemp(join(tmpdir(), 'holdfast-age-local-'));
    directories.push(localDir);

    const profile = await create('/api/vault', { name: 'offline owner key', publicKey: `  ${recipient}\n` });
    expect(profile).toMatchObject({ kind: 'public-key', publicKey: recipient, keyFingerprint: expect.stringMatching(/^[0-9a-f]{32}$/) });
    // A symmetric profile too, so its key is among the server's key material tried below.
    const symmetric = await create('/api/vault', { name: 'server-held key' });
    expect(symmetric.kind).toBe('symmetric');
    const kit = await server.call('GET', `/api/vault/${profile.id}/recovery-kit`, admin);
    expect(kit.status).toBe(400);
    expect(kit.body.error).toMatch(/only a public key/);

    const pg = await create('/api/adapters', { name: 'orders db', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' } });
    const local = await create('/api/adapters', { name: 'local disk', type: 'storage', adapterId: 'local', config: { path: localDir } });
    const job = await create('/api/jobs', {
      name: 'orders',
      schedule: '0 3 * * *',
      sourceId: pg.id,
      databases: [source],
      compression: 'GZIP',
      encryptionProfileId: profile.id,
      destinations: [{ configId: local.id, priority: 0 }],
    });
    // A seekable archive cannot use a public-key profile yet (its index must stay readable): 400, no job saved.
    const seekable = await server.call('POST', '/api/jobs', admin, { name: 'seekable orders', schedule: '0 3 * * *', sourceId: pg.id, databases: [source], compression: 'ZSTD', archiveFormat: 'SEEKABLE', encryptionProfileId: profile.id, destinations: [{ configId: local.id, priority: 0 }] });
    expect(seekable.status, JSON.stringify(seekable.body)).toBe(400);
    expect(seekable.body.error).toMatch(/body\.encryptionProfileId.*public-key/);
    const seekableUpdate = await server.call('PUT', `/api/jobs/${job.id}`, admin, { archiveFormat: 'SEEKABLE', compression: 'ZSTD' });
    expect(seekableUpdate.status, JSON.stringify(seekableUpdate.body)).toBe(400);
    // Nor a test restore: the server could never read the backup back.
    const testRestore = await server.call('PUT', `/api/jobs/${job.id}`, admin, { testRestore: { target: { type: 'database' } } });
    expect(testRestore.status, JSON.stringify(testRestore.body)).toBe(400);
    expect(testRestore.body.error).toMatch(/body\.testRestore.*public-key/);
    expect((await server.call('GET', `/api/jobs/${job.id}`, admin)).body.testRestore ?? null).toBeNull();
    expect((await server.call('GET', '/api/jobs', admin)).body.map((listed: { name: string }) => listed.name)).toEqual(['orders']);

    const trigger = await server.call('POST', `/api/jobs/${job.id}/run`, admin, {});
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(200);
    const backup = await settledExecution(server, admin, trigger.body.executionId, 120_000);
    expect(backup.status, JSON.stringify(backup.logs?.slice(-5))).toBe('Success');
    const fileName = (await readdir(localDir)).find((name) => name.endsWith('.gz.enc'))!;
    expect(fileName).toBeDefined();
    const backupPath = join(localDir, fileName);
    const encrypted = await readFile(backupPath);
    expect(encrypted.subarray(0, 22).toString('latin1')).toBe('age-encryption.org/v1\n');
    const sidecar = JSON.parse(await readFile(`${backupPath}.meta.json`, 'utf8'));
    expect(sidecar.encryption).toMatchObject({ format: 'age', recipient, profileId: profile.id, keyFingerprint: profile.keyFingerprint });

    // Debian's age decrypts it without Holdfast, to the same bytes as Holdfast's decrypter given the private key.
    const byAge = spawnSync('age', ['-d', '-i', join(keyDir, 'key.txt'), backupPath], { maxBuffer: 256 * 1024 * 1024 });
    expect(byAge.status, byAge.stderr.toString()).toBe(0);
    const byHoldfast = await decryptWith(createAgeDecryptStream(identity), encrypted);
    expect(byHoldfast).toBeInstanceOf(Buffer);
    expect((byHoldfast as Buffer).equals(byAge.stdout)).toBe(true);
    expect(byAge.stdout.subarray(0, 2).equals(Buffer.from([0x1f, 0x8b]))).toBe(true); // the gzip stream inside

    // Nothing the server holds opens it. Key material: the system key file, the symmetric profile's key (from its
    // recovery kit), and every 32-byte value written as hex or base64 anywhere in the data dir (SQLite database
    // included) or in the settings the server serves. Each is tried as an age X25519 identity and as an HFENC key.
    const kitResponse = await fetch(`${server.url}/api/vault/${symmetric.id}/recovery-kit`, { headers: { cookie: admin.cookie! } });
    expect(kitResponse.status).toBe(200);
    let material = Buffer.from(await kitResponse.arrayBuffer()).toString('latin1');
    for (const name of await readdir(server.dataDir, { recursive: true })) {
      const bytes = await readFile(join(server.dataDir, name)).catch(() => null);
      if (bytes) material += `\n${bytes.toString('latin1')}`;
    }
    const settings = await server.call('GET', '/api/settings', admin);
    material += JSON.stringify(settings.body);
    // On PostgreSQL the database lives outside the data dir: its whole content, as pg_dump writes it.
    if (server.databaseUrl) material += (await run('pg_dump', ['--data-only', server.databaseUrl], { maxBuffer: 256 * 1024 * 1024 })).stdout;
    expect(material).not.toContain('AGE-SECRET-KEY-1');
    const candidates = keyCandidates(material);
    const systemKey = (await readdir(server.dataDir)).find((name) => name.endsWith('.key'));
    expect(systemKey, 'the system key file in the data dir').toBeDefined();
    // At least the system key and the symmetric profile's key are among them.
    expect(candidates.length).toBeGreaterThanOrEqual(2);
    for (const candidate of candidates) {
      const asAge = await decryptWith(createAgeDecryptStream(asIdentity(candidate)), encrypted);
      expect(asAge).toBeInstanceOf(Error);
      expect((asAge as Error & { code?: string }).code).toBe('WRONG_KEY');
      const asHfenc = await decryptWith(createDecryptStream({ key: candidate }), encrypted);
      expect((asHfenc as Error & { code?: string }).code).toBe('NOT_ENCRYPTED');
    }
    // The independent identity encoder above agrees with age-keygen's, so the candidates were really tried.
    const ownScalar = spawnSync('age-keygen', ['-y'], { input: `${identity}\n`, encoding: 'utf8' });
    expect(ownScalar.stdout.trim()).toBe(recipient);

    // Downloads: the decrypted one needs the key (missing or wrong: 400, no URL) and gives age's bytes; the
    // encrypted file needs none.
    const noKey = await server.call('POST', `/api/storage/${local.id}/download-url`, admin, { file: fileName });
    expect(noKey.status, JSON.stringify(noKey.body)).toBe(400);
    expect(noKey.body.error).toMatch(/privateKey/);
    const otherPair = spawnSync('age-keygen', [], { encoding: 'utf8' });
    const wrongKey = /AGE-SECRET-KEY-1[0-9A-Z]+/.exec(otherPair.stdout)![0];
    const wrongDownload = await server.call('POST', `/api/storage/${local.id}/download-url`, admin, { file: fileName, privateKey: wrongKey });
    expect(wrongDownload.status, JSON.stringify(wrongDownload.body)).toBe(400);
    expect(wrongDownload.body.error).toMatch(/wrong key/);
    const granted = await server.call('POST', `/api/storage/${local.id}/download-url`, admin, { file: fileName, privateKey: identity });
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    const downloaded = await fetch(`${server.url}${granted.body.url}`);
    expect(downloaded.status).toBe(200);
    expect(Buffer.from(await downloaded.arrayBuffer()).equals(byAge.stdout)).toBe(true);
    const rawGrant = await server.call('POST', `/api/storage/${local.id}/download-url`, admin, { file: fileName, decrypt: false });
    expect(rawGrant.status).toBe(200);
    const raw = await fetch(`${server.url}${rawGrant.body.url}`);
    expect(Buffer.from(await raw.arrayBuffer()).equals(encrypted)).toBe(true);

    // Restores: without the key, with a malformed key, with a wrong key: 400, nothing queued, nothing restored.
    const restored = databaseName('agerestored');
    databases.push(restored);
    const listExecutions = async () => {
      const answer = await server.call('GET', '/api/history?limit=100', admin);
      expect(answer.status).toBe(200);
      return answer.body;
    };
    const before = await listExecutions();
    expect(JSON.stringify(before)).toContain(trigger.body.executionId);
    const missing = await server.call('POST', `/api/storage/${local.id}/restore`, admin, { file: fileName, database: restored, targetSourceId: pg.id });
    expect(missing.status, JSON.stringify(missing.body)).toBe(400);
    expect(missing.body.error).toMatch(/public-key profile.*privateKey/);
    const malformed = await server.call('POST', `/api/storage/${local.id}/restore`, admin, { file: fileName, database: restored, targetSourceId: pg.id, privateKey: 'AGE-SECRET-KEY-1NOPE' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatch(/body\.privateKey/);
    const wrong = await server.call('POST', `/api/storage/${local.id}/restore`, admin, { file: fileName, database: restored, targetSourceId: pg.id, privateKey: wrongKey });
    expect(wrong.status, JSON.stringify(wrong.body)).toBe(400);
    expect(wrong.body.error).toMatch(/wrong key/);
    expect(wrong.body.error).not.toContain(wrongKey);
    const after = await listExecutions();
    expect(JSON.stringify(after)).toBe(JSON.stringify(before));
    const exists = await run('psql', ['-h', '127.0.0.1', '-U', 'root', '-d', 'postgres', '-tAc', `SELECT count(*) FROM pg_database WHERE datname = '${restored}'`]);
    expect(exists.stdout.trim()).toBe('0');

    // With the key file's content: the restore runs and every row is back.
    const keyFileText = await readFile(join(keyDir, 'key.txt'), 'utf8');
    const restore = await server.call('POST', `/api/storage/${local.id}/restore`, admin, { file: fileName, database: restored, targetSourceId: pg.id, privateKey: keyFileText });
    expect(restore.status, JSON.stringify(restore.body)).toBe(200);
    const restoreRun = await settledExecution(server, admin, restore.body.executionId, 120_000);
    expect(restoreRun.status, JSON.stringify(restoreRun.logs?.slice(-5))).toBe('Success');
    expect(await tableDigests(restored)).toEqual(expected);

    // The private key was used and dropped: not in the database, the audit log, the execution or the data dir.
    const audit = await server.call('GET', '/api/audit?limit=200', admin);
    expect(audit.status).toBe(200);
    expect(JSON.stringify(audit.body)).not.toContain(identity);
    expect(JSON.stringify(restoreRun)).not.toContain(identity);
    for (const name of await readdir(server.dataDir, { recursive: true })) {
      const bytes = await readFile(join(server.dataDir, name)).catch(() => null);
      if (bytes) expect(bytes.includes(identity), name).toBe(false);
    }
    if (server.databaseUrl) expect((await run('pg_dump', ['--data-only', server.databaseUrl], { maxBuffer: 256 * 1024 * 1024 })).stdout).not.toContain(identity);
  });
});
