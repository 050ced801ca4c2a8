// The engine's BackupReader against real files on a local storage: raw and decrypted downloads, a database cut out
// of an encrypted, gzipped multi-database dump, and the refusal to guess which database was meant.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createWriteStream } from 'node:fs';
import { AdapterRegistry, silentLogger, type AnyAdapterDefinition } from '@holdfast/kernel';
import storageLocal from '@holdfast/storage-local';
import { container } from 'tsyringe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EngineBackupReader, planDownload } from '../src/backup-reader/backup-reader.js';
import { createCompressStream, createEncryptStream } from '../src/codec/index.js';
import { AdapterFactory } from '../src/run/adapters.js';
import { InMemoryJobCatalog } from './support/doubles.js';

function frame(type: string, payload: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'ascii');
  header.writeUInt32BE(payload.length, 1);
  return Buffer.concat([header, payload]);
}

/** A `.pgdumps` body per docs/formats/postgres-multi-dump.md holding `dumps` (database name to bytes). */
function multiDump(dumps: Record<string, Buffer>): Buffer {
  const parts: Buffer[] = [Buffer.from('HFPGMULTI\n', 'ascii'), Buffer.from([1])];
  for (const [name, bytes] of Object.entries(dumps)) {
    parts.push(frame('D', Buffer.from(JSON.stringify({ name }))));
    for (let offset = 0; offset < bytes.length; offset += 300_000) parts.push(frame('C', bytes.subarray(offset, offset + 300_000)));
    parts.push(frame('E', Buffer.alloc(0)));
  }
  parts.push(frame('Z', Buffer.from(JSON.stringify({ databases: Object.keys(dumps).length }))));
  return Buffer.concat(parts);
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('EngineBackupReader', () => {
  let dir: string;
  let reader: EngineBackupReader;
  const key = randomBytes(32);
  const dumps = { shop: randomBytes(700_000), crm: randomBytes(1000) };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hf-reader-'));
    const catalog = new InMemoryJobCatalog();
    catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    catalog.addConfig({ configId: 'db', name: 'Db', kind: 'source', adapterId: 'postgres', config: {} });
    catalog.keys.set('vault-1', key);
    const registry = new AdapterRegistry();
    registry.register(storageLocal as unknown as AnyAdapterDefinition, { packageName: '@holdfast/storage-local', version: '0.1.0' });
    const factory = new AdapterFactory(container.createChildContainer(), registry, silentLogger);
    reader = new EngineBackupReader(() => catalog, () => factory);
    // An encrypted, gzipped multi-database dump with its sidecar, written the way the engine's pipeline writes it.
    await pipeline(Readable.from([multiDump(dumps)]), createCompressStream('GZIP'), createEncryptStream({ key }), createWriteStream(join(dir, 'all.pgdumps.gz.enc')));
    const sidecar = { formatVersion: 1, createdAt: new Date().toISOString(), sha256: 'a'.repeat(64), locked: false, compression: { codec: 'GZIP' }, encryption: { profileId: 'vault-1', keyFingerprint: 'x' }, databases: ['shop', 'crm'] };
    await writeFile(join(dir, 'all.pgdumps.gz.enc.meta.json'), JSON.stringify(sidecar));
    await writeFile(join(dir, 'plain.dump'), 'PGDMP plain');
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('cuts one database out of an encrypted, gzipped multi-database dump and names the file after both', async () => {
    const opened = await reader.open('disk', 'all.pgdumps.gz.enc', { decrypt: true, database: 'shop' });
    expect(opened.fileName).toBe('all-shop.dump');
    expect(opened.size).toBeUndefined();
    expect((await collect(opened.stream)).equals(dumps.shop)).toBe(true);
    const crm = await reader.open('disk', 'all.pgdumps.gz.enc', { decrypt: true, database: 'crm' });
    expect((await collect(crm.stream)).equals(dumps.crm)).toBe(true);
  });

  it('refuses a decrypted download of several databases without a name, naming them', async () => {
    await expect(reader.open('disk', 'all.pgdumps.gz.enc', { decrypt: true })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/several databases \(shop, crm\)/) });
    await expect(reader.open('disk', 'all.pgdumps.gz.enc', { decrypt: true, database: 'nope' })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/no database "nope".*shop, crm/) });
  });

  it('streams the stored bytes unchanged with decrypt=false, with the stored size', async () => {
    const opened = await reader.open('disk', 'all.pgdumps.gz.enc', { decrypt: false });
    const bytes = await collect(opened.stream);
    expect(opened.fileName).toBe('all.pgdumps.gz.enc');
    expect(opened.size).toBe(bytes.length);
    expect(bytes.subarray(0, 5).toString('ascii')).toBe('HFENC');
    expect(opened.sidecar).toMatchObject({ databases: ['shop', 'crm'] });
  });

  it('opens an unencrypted file without a sidecar as is, and reports missing files and unknown storages', async () => {
    const opened = await reader.open('disk', 'plain.dump', { decrypt: true });
    expect(opened).toMatchObject({ fileName: 'plain.dump', size: 11, sidecar: null });
    expect((await collect(opened.stream)).toString()).toBe('PGDMP plain');
    await expect(reader.open('disk', 'missing.dump', { decrypt: true })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(reader.open('nope', 'plain.dump', { decrypt: true })).rejects.toMatchObject({ status: 404 });
    await expect(reader.open('db', 'plain.dump', { decrypt: true })).rejects.toMatchObject({ status: 404, message: 'Storage not found' });
  });

  it('fails the stream of a truncated multi-database dump instead of ending it cleanly', async () => {
    const whole = multiDump({ shop: Buffer.from('PGDMP shop') });
    await writeFile(join(dir, 'cut.pgdumps'), whole.subarray(0, whole.length - 8));
    const opened = await reader.open('disk', 'cut.pgdumps', { decrypt: true, database: 'shop' });
    await expect(collect(opened.stream)).rejects.toThrow(/truncated/);
  });
});

describe('planDownload', () => {
  const sidecar = { formatVersion: 1, createdAt: '', sha256: 'a'.repeat(64), locked: false, compression: { codec: 'GZIP' }, encryption: { profileId: 'p', keyFingerprint: 'f' }, databases: ['only'] };

  it('resolves the only database of an encrypted multi-database dump without a name', () => {
    expect(planDownload('x/b.pgdumps.gz.enc', sidecar, { decrypt: true })).toMatchObject({ database: 'only', fileName: 'b-only.dump', shouldDecrypt: true });
  });

  it('decrypts a single dump but keeps its compression, dropping only .enc from the name', () => {
    expect(planDownload('b.dump.gz.enc', sidecar, { decrypt: true })).toMatchObject({ database: null, fileName: 'b.dump.gz', shouldDecrypt: true, codec: 'GZIP' });
  });
});
