// Issue 21: a job's compression level and ZSTD worker threads are stored, shown, validated (400 naming the field)
// and handed to the engine in the run plan; jobs that never set them keep null (the codec defaults).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { populate } from './fixtures.js';
import { createSite, startCatalog, type CatalogServer, type Site } from './harness.js';

describe('job compression options', () => {
  let site: Site;
  let server: CatalogServer;
  let ids: Awaited<ReturnType<typeof populate>>;
  beforeAll(async () => {
    site = await createSite('sqlite');
    server = await startCatalog(site);
    ids = await populate(server);
  });
  afterAll(async () => {
    await server?.close();
    await site?.remove();
  });

  it('are null by default and in the run plan as null', async () => {
    const job = (await server.call('GET', `/api/jobs/${ids.job.id}`)).json;
    expect(job.compressionLevel).toBeNull();
    expect(job.compressionThreads).toBeNull();
    const plan = await server.catalog.jobCatalog.resolveRunPlan(ids.job.id);
    expect(plan.job.compressionLevel).toBeNull();
    expect(plan.job.compressionThreads).toBeNull();
  });

  it('are stored with ZSTD, shown by GET and handed to the engine', async () => {
    const updated = await server.call('PUT', `/api/jobs/${ids.job.id}`, { compression: 'ZSTD', compressionLevel: 6, compressionThreads: 2 });
    expect(updated.status, JSON.stringify(updated.json)).toBe(200);
    expect(updated.json).toMatchObject({ compression: 'ZSTD', compressionLevel: 6, compressionThreads: 2 });
    expect((await server.call('GET', `/api/jobs/${ids.job.id}`)).json).toMatchObject({ compressionLevel: 6, compressionThreads: 2 });
    const plan = await server.catalog.jobCatalog.resolveRunPlan(ids.job.id);
    expect(plan.job).toMatchObject({ compression: 'ZSTD', compressionLevel: 6, compressionThreads: 2 });
  });

  it('rejects a level outside the codec range, threads out of range and threads on another codec, with 400', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ compression: 'ZSTD', compressionLevel: 20 }, 'ZSTD level must be from 1 to 19, got 20'],
      [{ compression: 'GZIP', compressionLevel: 0, compressionThreads: null }, 'GZIP level must be from 1 to 9, got 0'],
      [{ compression: 'NONE', compressionLevel: 3, compressionThreads: null }, 'compression NONE takes no level'],
      [{ compression: 'ZSTD', compressionLevel: null, compressionThreads: 0 }, 'must be from 1 to 16, got 0'],
      [{ compression: 'ZSTD', compressionThreads: 17 }, 'must be from 1 to 16, got 17'],
      [{ compression: 'BROTLI', compressionLevel: null, compressionThreads: 2 }, 'threads apply to ZSTD compression only, not BROTLI'],
    ];
    for (const [body, message] of cases) {
      const answer = await server.call('PUT', `/api/jobs/${ids.job.id}`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(answer.json)).toContain(message);
    }
    const notInteger = await server.call('PUT', `/api/jobs/${ids.job.id}`, { compressionThreads: 1.5 });
    expect(notInteger.status).toBe(400);
    expect(JSON.stringify(notInteger.json)).toContain('compressionThreads');
  });

  it('checks an update against the stored codec: switching a ZSTD job with threads to GZIP needs the threads cleared', async () => {
    expect((await server.call('PUT', `/api/jobs/${ids.job.id}`, { compression: 'ZSTD', compressionLevel: null, compressionThreads: 3 })).status).toBe(200);
    const refused = await server.call('PUT', `/api/jobs/${ids.job.id}`, { compression: 'GZIP' });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.json)).toContain('body.compressionThreads');
    const switched = await server.call('PUT', `/api/jobs/${ids.job.id}`, { compression: 'GZIP', compressionThreads: null, compressionLevel: 9 });
    expect(switched.status).toBe(200);
    expect(switched.json).toMatchObject({ compression: 'GZIP', compressionLevel: 9, compressionThreads: null });
  });

  it('rejects bad options on create too', async () => {
    const job = (await server.call('GET', `/api/jobs/${ids.job.id}`)).json;
    const created = await server.call('POST', '/api/jobs', {
      name: 'compression options create',
      schedule: '0 3 * * *',
      sourceId: job.sourceId,
      compression: 'GZIP',
      compressionThreads: 2,
      destinations: job.destinations.map((d: { configId: string }) => ({ configId: d.configId })),
    });
    expect(created.status).toBe(400);
    expect(JSON.stringify(created.json)).toContain('threads apply to ZSTD compression only, not GZIP');
  });
});
