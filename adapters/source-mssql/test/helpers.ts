import { createHash, randomBytes } from 'node:crypto';
import { chownSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { SourceAdapter } from '@holdfast/sdk';
import { createAdapterInstance } from '@holdfast/testkit';
import { sshdState } from '@holdfast/tooling/harness/sshd';
import definition from '../src/index.js';
import type { FakeDatabase, FakeMssqlServer } from './fake-tds/fake-mssql.js';

export const PASSWORD = 'Fake-Passw0rd!';

export function mssqlSource(config: Record<string, unknown>): SourceAdapter {
  return createAdapterInstance<SourceAdapter>(definition, config);
}

/** Base config pointing at the fake, with the backup directory reached through a local "shared" directory. */
export function sharedConfig(fake: FakeMssqlServer, directory: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { host: '127.0.0.1', port: fake.port, user: 'sa', password: PASSWORD, encrypt: false, trustServerCertificate: true, backupDirectory: directory, sharedDirectory: directory, ...extra };
}

/** Same, but the .bak travels over SFTP as the sshd's user (the fake "server" and sshd share this machine's disk). */
export function sshConfig(fake: FakeMssqlServer, directory: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const sshd = sshdState();
  return {
    host: '127.0.0.1',
    port: fake.port,
    user: 'sa',
    password: PASSWORD,
    encrypt: false,
    trustServerCertificate: true,
    backupDirectory: directory,
    ssh: { host: sshd.host, port: sshd.port, username: sshd.user, hostKeySha256: sshd.hostKeySha256 },
    sshPrivateKey: readFileSync(sshd.keyPath, 'utf8'),
    ...extra,
  };
}

/** A fresh local directory standing in for a shared backup mount. */
export function tempDir(label: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `hf-mssql-${label}-`));
}

/** A backup directory in the sshd user's home, owned by that user (as a real one is writable by the SSH login). */
export function sshBackupDir(label: string): string {
  const sshd = sshdState();
  const dir = join(sshd.home, `hf-mssql-${label}-${randomBytes(4).toString('hex')}`);
  mkdirSync(dir, { mode: 0o755 });
  const uid = uidOf(sshd.user);
  chownSync(dir, uid, uid);
  return dir;
}

function uidOf(user: string): number {
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((entry) => entry.startsWith(`${user}:`));
  return Number(line?.split(':')[2]);
}

export function filesIn(dir: string): string[] {
  return readdirSync(dir);
}

export async function removeAll(...dirs: (string | undefined)[]): Promise<void> {
  for (const dir of dirs) if (dir) await rm(dir, { recursive: true, force: true });
}

/** Deterministic pseudo-random bytes (so the restored pages can be compared with the seeded ones). */
function pagesOf(seed: string, size: number): Buffer {
  const out = Buffer.alloc(size);
  let block = createHash('sha256').update(seed).digest();
  for (let offset = 0; offset < size; offset += block.length) {
    block.copy(out, offset);
    block = createHash('sha256').update(block).digest();
  }
  return out;
}

/** Puts a database into the fake: two files (data and log), rows, and `size` bytes of pages. */
export function seedDatabase(fake: FakeMssqlServer, name: string, size = 1536 * 1024): FakeDatabase {
  const safe = name.replace(/[^A-Za-z0-9]/g, '_');
  const database: FakeDatabase = {
    name,
    state: 'ONLINE',
    files: [
      { logicalName: `${safe}`, physicalName: `${fake.dataPath}${safe}.mdf`, type: 'D' },
      { logicalName: `${safe}_log`, physicalName: `${fake.logPath}${safe}_log.ldf`, type: 'L' },
    ],
    rows: Array.from({ length: 50 }, (_, id) => ({ id, name: `row ${id} of ${name}`, note: id % 7 === 0 ? null : `naïve 東京 ${id}` })),
    pages: pagesOf(name, size),
  };
  fake.databases.set(name, database);
  return database;
}

export async function drain(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
