// Issue 12, acceptance 3: one backup job writes to three real destinations at once (S3 on Ceph RGW, WebDAV on Apache,
// SMB on Samba). Each holds a byte-identical object whose SHA-256 equals the sidecar's. Then the WebDAV server is cut
// off mid-upload (a loopback TCP relay in front of the real Apache dies after 4 MiB): the run is Partial, and the S3
// and SMB copies are complete and valid.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { CreateBucketCommand, DeleteBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { StorageAdapter } from '@holdfast/kernel';
import storageS3 from '@holdfast/storage-s3';
import storageSmb from '@holdfast/storage-smb';
import storageWebdav from '@holdfast/storage-webdav';
import { createAdapterInstance, deterministicStream } from '@holdfast/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceState, startAdminServer } from './support/admin-server.js';
import type { Caller, FullServer } from './support/full-server.js';

const run = promisify(execFile);

async function sha256Of(storage: StorageAdapter, key: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of await storage.get(key)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function sidecarOf(storage: StorageAdapter, key: string): Promise<{ sha256: string; size: number }> {
  const chunks: Buffer[] = [];
  for await (const chunk of await storage.get(`${key}.meta.json`)) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function keysOf(storage: StorageAdapter): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of storage.list('')) keys.push(object.key);
  return keys.sort();
}

async function settled(server: FullServer, caller: Caller, executionId: string): Promise<any> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const answer = await server.call('GET', `/api/executions/${executionId}?includeLogs=true`, caller);
    if (!['Pending', 'Running'].includes(answer.body.data.status)) return answer.body.data;
    if (Date.now() > deadline) throw new Error(`execution ${executionId} still ${answer.body.data.status}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** A TCP relay to `target` that dies (every socket destroyed, listener closed) once `cutAfter` bytes went upstream. */
async function dyingRelay(target: { host: string; port: number }, cutAfter: number): Promise<{ port: number; forwarded: () => number; died: Promise<void> }> {
  let forwarded = 0;
  const sockets = new Set<net.Socket>();
  let die!: () => void;
  const died = new Promise<void>((resolve) => (die = resolve));
  let isDead = false;
  const server = net.createServer((client) => {
    if (isDead) return client.destroy();
    const upstream = net.connect(target);
    sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => {
      forwarded += chunk.length;
      if (forwarded > cutAfter && !isDead) {
        isDead = true;
        for (const socket of sockets) socket.destroy();
        server.close();
        die();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    for (const socket of [client, upstream]) socket.on('error', () => undefined).on('close', () => (client.destroy(), upstream.destroy()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, forwarded: () => forwarded, died };
}

describe('one job, three real destinations: S3 (Ceph RGW), WebDAV (Apache), SMB (Samba)', () => {
  let server: FullServer;
  let admin: Caller;
  let work: string;
  const cleanups: (() => Promise<unknown>)[] = [];
  const name = `three-${randomBytes(4).toString('hex')}`;
  let configs: { s3: Record<string, unknown>; webdav: Record<string, unknown>; smb: Record<string, unknown> };

  beforeAll(async () => {
    const [rgw, dav, smb] = await Promise.all([serviceState('ceph-rgw'), serviceState('webdav'), serviceState('samba')]);
    const client = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', credentials: rgw });
    await client.send(new CreateBucketCommand({ Bucket: name }));
    cleanups.push(async () => {
      // The gateway keeps objects in memory: empty and remove the bucket.
      const storage = createAdapterInstance<StorageAdapter>(storageS3, { ...configs.s3, prefix: '' });
      for (const key of await keysOf(storage)) await storage.delete(key);
      await storage.dispose?.();
      await client.send(new DeleteBucketCommand({ Bucket: name }));
      client.destroy();
    });
    await run('install', ['-d', '-o', dav.owner, '-g', dav.owner, join(dav.dataDir, name)]);
    await run('install', ['-d', '-o', smb.user, '-g', smb.user, join(smb.sharePath, name)]);
    cleanups.push(() => rm(join(dav.dataDir, name), { recursive: true, force: true }), () => rm(join(smb.sharePath, name), { recursive: true, force: true }));
    configs = {
      s3: { preset: 'custom', endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, bucket: name, accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
      webdav: { url: dav.basicUrl, username: dav.user, password: dav.password, root: `/${name}` },
      smb: { host: smb.host, port: smb.port, share: smb.share, path: name, username: smb.user, password: smb.password },
    };

    // A directory source of 24 MiB of incompressible data, stored without compression.
    work = await mkdtemp(join(tmpdir(), 'holdfast-three-'));
    await mkdir(join(work, 'data'));
    await pipeline(deterministicStream(24 * 1024 * 1024, { seed: 'three destinations' }), createWriteStream(join(work, 'data', 'payload.bin')));
    ({ server, admin } = await startAdminServer('sqlite'));
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
    if (work) await rm(work, { recursive: true, force: true });
  });

  async function create(path: string, body: unknown): Promise<any> {
    const answer = await server.call('POST', path, admin, body);
    expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201);
    return answer.body;
  }

  async function jobTo(label: string, destinationConfigs: Record<string, unknown>[]): Promise<string> {
    const source = await create('/api/adapters', { name: `${label} files`, type: 'database', adapterId: 'directory', config: { paths: [join(work, 'data')] } });
    const ids: string[] = [];
    for (const [index, [adapterId, config]] of destinationConfigs.map((entry) => Object.entries(entry)[0]!).entries()) {
      ids.push((await create('/api/adapters', { name: `${label} ${adapterId} ${index}`, type: 'storage', adapterId, config })).id);
    }
    const job = await create('/api/jobs', { name: label, schedule: '0 3 * * *', sourceId: source.id, compression: 'NONE', destinations: ids.map((configId, priority) => ({ configId, priority })) });
    return job.id;
  }

  it('writes byte-identical objects whose SHA-256 equals the sidecar on all three', async () => {
    const jobId = await jobTo('all three', [{ s3: { ...configs.s3, prefix: 'ok' } }, { webdav: configs.webdav }, { smb: configs.smb }]);
    const started = await server.call('POST', `/api/jobs/${jobId}/run`, admin, {});
    const backup = await settled(server, admin, started.body.executionId);
    expect(backup.status, JSON.stringify(backup.logs?.slice(-5))).toBe('Success');
    const storages = [
      createAdapterInstance<StorageAdapter>(storageS3, { ...configs.s3, prefix: 'ok' }),
      createAdapterInstance<StorageAdapter>(storageWebdav, configs.webdav),
      createAdapterInstance<StorageAdapter>(storageSmb, configs.smb),
    ];
    const hashes: string[] = [];
    for (const storage of storages) {
      const keys = await keysOf(storage);
      const key = keys.find((entry) => entry.endsWith('.tar'))!;
      expect(keys).toEqual([key, `${key}.meta.json`]);
      const sidecar = await sidecarOf(storage, key);
      hashes.push(await sha256Of(storage, key));
      expect(hashes.at(-1)).toBe(sidecar.sha256);
      expect((await storage.stat(key)).size).toBe(backup.size);
      await storage.dispose?.();
    }
    expect(new Set(hashes).size).toBe(1);
  }, 180_000);

  it('a WebDAV server that dies mid-upload makes the run Partial; S3 and SMB hold complete, valid copies', async () => {
    const dav = await serviceState('webdav');
    const relay = await dyingRelay({ host: dav.host, port: dav.port }, 4 * 1024 * 1024);
    const relayed = { ...configs.webdav, url: dav.basicUrl.replace(`:${dav.port}`, `:${relay.port}`), root: `/${name}` };
    const jobId = await jobTo('one dies', [{ s3: { ...configs.s3, prefix: 'partial' } }, { webdav: relayed }, { smb: { ...configs.smb } }]);
    // The SMB copy of the first test stays; this run's copy is told apart by its name.
    const before = await keysOf(createAdapterInstance<StorageAdapter>(storageSmb, configs.smb));
    const started = await server.call('POST', `/api/jobs/${jobId}/run`, admin, {});
    const backup = await settled(server, admin, started.body.executionId);
    await relay.died;
    expect(relay.forwarded()).toBeGreaterThan(4 * 1024 * 1024);
    expect(backup.status, JSON.stringify(backup.logs?.slice(-8))).toBe('Partial');
    expect(backup.logs.map((entry: { message: string }) => entry.message).join('\n')).toMatch(/webdav/i);

    const s3 = createAdapterInstance<StorageAdapter>(storageS3, { ...configs.s3, prefix: 'partial' });
    const smb = createAdapterInstance<StorageAdapter>(storageSmb, configs.smb);
    const s3Key = (await keysOf(s3)).find((key) => key.endsWith('.tar'))!;
    const smbKey = (await keysOf(smb)).find((key) => key.endsWith('.tar') && !before.includes(key))!;
    expect(s3Key).toBe(smbKey);
    for (const [storage, key] of [[s3, s3Key], [smb, smbKey]] as const) {
      const sidecar = await sidecarOf(storage, key);
      expect(await sha256Of(storage, key)).toBe(sidecar.sha256);
      expect(sidecar.size).toBe((await storage.stat(key)).size);
      await storage.dispose?.();
    }
    // Through the real server (no relay): the cut-off upload left no visible object.
    const direct = createAdapterInstance<StorageAdapter>(storageWebdav, configs.webdav);
    expect((await keysOf(direct)).filter((key) => key === smbKey)).toEqual([]);
    await direct.dispose?.();
  }, 180_000);
});
