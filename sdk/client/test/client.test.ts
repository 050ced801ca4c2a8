import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HoldfastApiError, HoldfastClient, HoldfastNetworkError, signIn, type ExecutionEvent, type RunProgress } from '../src/index.js';
import { ADMIN, startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
let admin: HoldfastClient;
let work: string;
let jobId: string;

beforeAll(async () => {
  server = await startTestServer();
  work = await mkdtemp(join(tmpdir(), 'holdfast-client-'));
  await mkdir(join(work, 'source'));
  await mkdir(join(work, 'storage'));
  await writeFile(join(work, 'source', 'a.txt'), 'hello from the client test');
  admin = await signIn(server.url, ADMIN);
  const source = await admin.unwrap(
    admin.api.POST('/api/adapters', { body: { name: 'files', type: 'database', adapterId: 'directory', config: { paths: [join(work, 'source')] } } }),
  );
  const storage = await admin.unwrap(
    admin.api.POST('/api/adapters', { body: { name: 'disk', type: 'storage', adapterId: 'local', config: { path: join(work, 'storage') } } }),
  );
  const job = await admin.unwrap(
    admin.api.POST('/api/jobs', {
      body: { name: 'client job', schedule: '0 3 * * *', sourceId: source.id, compression: 'GZIP', destinations: [{ configId: storage.id, priority: 0 }] },
    }),
  );
  jobId = job.id;
}, 60_000);

afterAll(async () => {
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function issueKey(permissions: string[]): Promise<string> {
  const issued = (await admin.unwrap(admin.api.POST('/api/api-keys', { body: { name: `key ${permissions.join(' ')}`, permissions } }))) as {
    key?: string;
    rawKey?: string;
  };
  const raw = issued.key ?? issued.rawKey;
  if (!raw) throw new Error('POST /api/api-keys returned no raw key');
  return raw;
}

describe('HoldfastClient', () => {
  it('makes typed calls with a session (CSRF on mutations) and with an API key', async () => {
    const me = await admin.unwrap(admin.api.GET('/api/users/me'));
    expect(me.email).toBe(ADMIN.email);
    const raw = await issueKey(['jobs:read']);
    const byKey = new HoldfastClient({ baseUrl: server.url, apiKey: raw });
    const jobs = await byKey.unwrap(byKey.api.GET('/api/jobs'));
    expect(jobs.map((job) => job.id)).toContain(jobId);
  });

  it('throws HoldfastApiError with status and body for 401, 403 and 404', async () => {
    const stranger = new HoldfastClient({ baseUrl: server.url, apiKey: 'svc_key_0000000000000000000000000000000000000000' });
    const unauthorized = await stranger.unwrap(stranger.api.GET('/api/jobs')).catch((error: unknown) => error);
    expect(unauthorized).toBeInstanceOf(HoldfastApiError);
    expect((unauthorized as HoldfastApiError).status).toBe(401);

    const readOnly = new HoldfastClient({ baseUrl: server.url, apiKey: await issueKey(['jobs:read']) });
    const forbidden = await readOnly.unwrap(readOnly.api.POST('/api/jobs/{id}/run', { params: { path: { id: jobId } }, body: {} })).catch((e: unknown) => e);
    expect((forbidden as HoldfastApiError).status).toBe(403);

    const missing = await admin.unwrap(admin.api.GET('/api/jobs/{id}', { params: { path: { id: 'no-such-job' } } })).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(HoldfastApiError);
    expect((missing as HoldfastApiError).status).toBe(404);
    expect((missing as HoldfastApiError).serverMessage).toMatch(/not found/i);
    expect((missing as HoldfastApiError).path).toBe('/api/jobs/no-such-job');
  });

  it('throws HoldfastNetworkError when nothing listens', async () => {
    const port = await closedPort();
    const nowhere = new HoldfastClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'x' });
    const error = await nowhere.unwrap(nowhere.api.GET('/api/jobs')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HoldfastNetworkError);
    expect((error as Error).message).toMatch(new RegExp(`127\\.0\\.0\\.1:${port}.*ECONNREFUSED`));
  });

  it('runAndWait runs a job with a jobs:execute + history:read key, reports progress and returns Success', async () => {
    const ci = new HoldfastClient({ baseUrl: server.url, apiKey: await issueKey(['jobs:execute', 'history:read']) });
    const seen: RunProgress[] = [];
    let started = '';
    const final = await ci.runAndWait(jobId, { onStarted: (id) => (started = id), onProgress: (p) => seen.push(p) });
    expect(final.status, final.error ?? '').toBe('Success');
    expect(final.id).toBe(started);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.at(-1)).toMatchObject({ executionId: started, status: 'Success' });
    const files = await readdir(join(work, 'storage'), { recursive: true });
    expect(files.some((name) => name.endsWith('.tar.gz'))).toBe(true);
  }, 60_000);

  it('watch() streams progress and log events and ends with the final status', async () => {
    const queued = await admin.unwrap(admin.api.POST('/api/jobs/{id}/run', { params: { path: { id: jobId } }, body: { lock: true } }));
    const events: ExecutionEvent[] = [];
    for await (const event of admin.watch(queued.executionId)) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: 'status', status: 'Success' });
    expect(events.some((event) => event.type === 'progress')).toBe(true);
    expect(events.some((event) => event.type === 'log')).toBe(true);
  }, 60_000);

  it('watch() of an unknown execution throws a 404 HoldfastApiError', async () => {
    const iterate = async () => {
      for await (const _event of admin.watch('no-such-execution')) void _event;
    };
    await expect(iterate()).rejects.toMatchObject({ name: 'HoldfastApiError', status: 404 });
  });

  it('has no node: imports in its runtime code (it must run in browsers)', async () => {
    const dir = new URL('../src/', import.meta.url);
    const files = (await readdir(dir, { recursive: true })).filter((name) => name.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(4);
    for (const file of files) expect(await readFile(new URL(file, dir), 'utf8'), file).not.toMatch(/from ['"]node:|require\(/);
  });
});
