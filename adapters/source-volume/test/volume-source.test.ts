import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError } from '@holdfast/sdk';
import { FakeDockerEngine } from './fake-docker.js';
import { drain, tarOf, volumeSource } from './helpers.js';
import { seedVolumeFolder } from './seed.js';

// Every test here runs against the labelled fake of the Docker Engine API (no Docker Engine can run on this machine).
const fake = await FakeDockerEngine.start();
afterAll(() => fake.stop());

let appId = '';
beforeEach(async () => {
  fake.calls.length = 0;
  fake.faults.length = 0;
  fake.containers.clear();
  if (!fake.volumes.has('app_data')) await seedVolumeFolder(await fake.addVolume('app_data'));
  appId = fake.addRunningContainer('/app', 'app_data');
  fake.addRunningContainer('/other', 'other_data');
});

const config = (extra: Record<string, unknown> = {}) => ({ dockerHost: `unix://${fake.socketPath}`, volume: 'app_data', stopContainers: true, ...extra });
const BEFORE_ARCHIVE = ['GET /version', 'GET /volumes/app_data', 'GET /containers/json', 'POST /containers/{id}/stop', 'POST /containers/create'];

describe('source-volume against a fake Docker Engine API', () => {
  it('stops the volume users, reads the archive through a read-only helper, removes it and restarts the users', async () => {
    const handle = await volumeSource(config()).dump({ databases: [], signal: new AbortController().signal });
    const bytes = await drain(handle.stream);
    const stats = await handle.done;
    expect(stats).toMatchObject({ bytes: bytes.length, databases: ['app_data'], engineVersion: '24.0.7-fake', warnings: [] });
    expect(fake.sequence()).toEqual([...BEFORE_ARCHIVE, 'GET /containers/{id}/archive', 'DELETE /containers/{id}', 'POST /containers/{id}/start']);
    const list = fake.calls.find((call) => call.path === '/containers/json')!;
    expect(JSON.parse(list.query.filters!)).toEqual({ volume: ['app_data'] });
    expect(fake.calls.find((call) => call.path.endsWith('/stop'))!.path).toBe(`/containers/${appId}/stop`);
    expect(fake.calls.find((call) => call.path.endsWith('/start'))!.path).toBe(`/containers/${appId}/start`);
    const create = fake.calls.find((call) => call.path === '/containers/create')!.body as { Image: string; HostConfig: { Mounts: unknown[] } };
    expect(create.Image).toBe('alpine:3');
    expect(create.HostConfig.Mounts).toEqual([{ Type: 'volume', Source: 'app_data', Target: '/volume', ReadOnly: true }]);
    expect(fake.calls.find((call) => call.path.endsWith('/archive'))!.query.path).toBe('/volume');
    expect(fake.helpers()).toEqual([]);
    expect(fake.containers.get(appId)!.state).toBe('running');
    expect(bytes.includes(Buffer.from('volume/conf/app.ini'))).toBe(true);
  });

  it('does not touch the users without stopContainers', async () => {
    const handle = await volumeSource(config({ stopContainers: false })).dump({ databases: [], signal: new AbortController().signal });
    await drain(handle.stream);
    await handle.done;
    expect(fake.sequence()).toEqual(['GET /version', 'GET /volumes/app_data', 'POST /containers/create', 'GET /containers/{id}/archive', 'DELETE /containers/{id}']);
  });

  it('restarts the stopped containers when the archive request fails before the first byte', async () => {
    fake.faults.push({ method: 'GET', pathPattern: /\/archive$/, status: 500 });
    const error = await volumeSource(config()).dump({ databases: [], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('TRANSIENT');
    expect((error as Error).message).toMatch(/^\[source-volume\] GET \/containers\/\{?.*archive answered 500/);
    expect(fake.sequence().slice(-3)).toEqual(['GET /containers/{id}/archive', 'DELETE /containers/{id}', 'POST /containers/{id}/start']);
    expect(fake.containers.get(appId)!.state).toBe('running');
    expect(fake.helpers()).toEqual([]);
  });

  it('restarts the stopped containers when the archive stream breaks off mid-dump', async () => {
    fake.faults.push({ method: 'GET', pathPattern: /\/archive$/, cutAfterBytes: 300_000 });
    const handle = await volumeSource(config()).dump({ databases: [], signal: new AbortController().signal });
    handle.stream.on('error', () => undefined);
    handle.stream.resume();
    const error = await handle.done.catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('TRANSIENT');
    expect(fake.sequence().slice(-2)).toEqual(['DELETE /containers/{id}', 'POST /containers/{id}/start']);
    expect(fake.containers.get(appId)!.state).toBe('running');
    expect(fake.helpers()).toEqual([]);
  });

  it('restarts the stopped containers and removes the helper when the dump is aborted', async () => {
    const controller = new AbortController();
    const handle = await volumeSource(config()).dump({ databases: [], signal: controller.signal });
    handle.stream.on('error', () => undefined);
    expect(fake.helpers()).toHaveLength(1);
    expect(fake.containers.get(appId)!.state).toBe('exited');
    controller.abort();
    const error = await handle.done.catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('ABORTED');
    expect(fake.helpers()).toEqual([]);
    expect(fake.containers.get(appId)!.state).toBe('running');
    expect(fake.sequence().slice(-2)).toEqual(['DELETE /containers/{id}', 'POST /containers/{id}/start']);
  });

  it('fails before any container is touched when the volume does not exist', async () => {
    const error = await volumeSource(config({ volume: 'missing_vol' })).dump({ databases: [], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('NOT_FOUND');
    expect((error as Error).message).toContain('volume missing_vol does not exist');
    expect(fake.sequence()).toEqual(['GET /version', 'GET /volumes/missing_vol']);
  });

  it('names the missing socket and never a secret when the Engine is unreachable', async () => {
    const key = '-----BEGIN PRIVATE KEY-----\nSECRETKEYMATERIAL\n-----END PRIVATE KEY-----';
    const source = volumeSource(config({ dockerHost: '/nonexistent/docker.sock', tlsKey: key }));
    const error = await source.dump({ databases: [], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(error)).toBe(true);
    expect((error as Error).message).toBe(
      '[source-volume] cannot reach the Docker Engine at unix:///nonexistent/docker.sock: the socket does not exist (is Docker running, is the socket mounted?)',
    );
    expect((error as Error).message).not.toContain('SECRETKEYMATERIAL');
    const tcp = await volumeSource(config({ dockerHost: 'tcp://127.0.0.1:1' })).check();
    expect(tcp).toMatchObject({ ok: false, message: expect.stringContaining('tcp://127.0.0.1:1: the connection was refused') });
  });

  it('pulls a missing helper image once and retries the create', async () => {
    const handle = await volumeSource(config({ helperImage: 'busybox:1.36', stopContainers: false })).dump({ databases: [], signal: new AbortController().signal });
    await drain(handle.stream);
    await handle.done;
    expect(fake.sequence().slice(2, 5)).toEqual(['POST /containers/create', 'POST /images/create', 'POST /containers/create']);
    expect(fake.calls.find((call) => call.path === '/images/create')!.query).toEqual({ fromImage: 'busybox', tag: '1.36' });
  });

  it('restores into a new volume through a read-write helper, and lists volumes and the Engine version', async () => {
    const source = volumeSource(config());
    const result = await source.restore(await tarOf({ 'volume/': '', 'volume/a.txt': 'alpha', 'volume/sub/b.txt': 'beta' }), {
      target: { database: 'fresh_vol' },
      signal: new AbortController().signal,
    });
    expect(result.warnings).toEqual(['volume fresh_vol did not exist and was created']);
    expect(fake.sequence()).toEqual([
      'GET /version',
      'GET /volumes/fresh_vol',
      'POST /volumes/create',
      'GET /containers/json',
      'POST /containers/create',
      'PUT /containers/{id}/archive',
      'DELETE /containers/{id}',
    ]);
    const create = fake.calls.find((call) => call.path === '/containers/create')!.body as { HostConfig: { Mounts: { ReadOnly: boolean }[] } };
    expect(create.HostConfig.Mounts[0]!.ReadOnly).toBe(false);
    expect(await readFile(join(fake.volumes.get('fresh_vol')!, 'sub', 'b.txt'), 'utf8')).toBe('beta');
    expect(await source.listDatabases()).toEqual(expect.arrayContaining(['app_data', 'fresh_vol']));
    expect(await source.detectVersion()).toEqual({ version: '24.0.7-fake', edition: 'Docker Engine (API 1.43)' });
  });

  it('refuses an archive member that leaves the volume and still removes the helper', async () => {
    const error = await volumeSource(config())
      .restore(await tarOf({ 'volume/ok.txt': 'fine', '../../etc/evil': 'x' }), { target: { database: 'app_data' }, signal: new AbortController().signal })
      .catch((e: unknown) => e);
    expect((error as Error).message).toContain('points outside the volume');
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect(fake.helpers()).toEqual([]);
    expect(fake.containers.get(appId)!.state).toBe('running');
    expect(fake.sequence().slice(-2)).toEqual(['DELETE /containers/{id}', 'POST /containers/{id}/start']);
  });
});
