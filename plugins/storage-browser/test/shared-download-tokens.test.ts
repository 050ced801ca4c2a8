// Download tokens on PostgreSQL live in a table every server process shares (issue 18, scale-out): the SPEC state
// table (valid, in flight, used, expired, swept) holds across two stores on one database, as across two processes,
// only the token's hash is stored, a single-file grant keeps its archive path, and the public download gives exactly
// one 200 per link.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ORM_DATABASE } from '@holdfast/orm-port';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DatabaseDownloadTokens } from '../src/shared-download-tokens.js';
import { TOKEN_LIFETIME_MS } from '../src/download-tokens.js';
import { startBrowserServer, type BrowserServer } from './support/harness.js';

const DOWNLOAD = 'perm:storage:download';

describe('download tokens shared through PostgreSQL', () => {
  let server: BrowserServer;
  let dir: string;
  let now: number;
  let processA: DatabaseDownloadTokens;
  let processB: DatabaseDownloadTokens;
  const grant = { storageId: 'disk', file: 'a.dump', decrypt: true, database: 'shop' };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hf-shared-tokens-'));
    server = await startBrowserServer('postgresql');
    server.catalog.add({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    now = Date.now();
    const database = server.container.resolve(ORM_DATABASE);
    processA = new DatabaseDownloadTokens(() => database, { now: () => now });
    processB = new DatabaseDownloadTokens(() => database, { now: () => now });
  });

  afterEach(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a token issued by one store is claimed once through another; a failed download releases it, a completed one uses it up', async () => {
    const record = await processA.issue(grant);
    expect(record.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(record).toMatchObject({ ...grant, expiresAt: now + TOKEN_LIFETIME_MS, usedAt: null });
    const stored = await server.container.resolve(ORM_DATABASE).em().getKnex()('download_tokens').select('token_hash');
    expect(stored).toEqual([{ token_hash: createHash('sha256').update(record.token).digest('hex') }]);

    expect(await processB.claim(record.token)).toMatchObject({ ...grant, token: record.token });
    await expect(processA.claim(record.token)).rejects.toMatchObject({ status: 401, reason: 'download token in use by another download' });
    await processB.release(record.token);
    await processA.claim(record.token);
    await processA.consume(record.token);
    await expect(processB.claim(record.token)).rejects.toMatchObject({ status: 401, reason: 'download token already used' });
    await expect(processB.claim('forged')).rejects.toMatchObject({ status: 401, reason: 'download token unknown' });
  });

  it('carries the archive path of a single-file download of a seekable archive through the table, and no path when none was granted', async () => {
    const fileGrant = { storageId: 'disk', file: 'tree_inc-1.hfa.enc', decrypt: true, path: '0-src/docs/report.pdf' };
    const withPath = await processA.issue(fileGrant);
    const withoutPath = await processA.issue(grant);
    const knex = server.container.resolve(ORM_DATABASE).em().getKnex();
    const rows = await knex('download_tokens').select('token_hash', 'archive_path');
    expect(rows).toContainEqual({ token_hash: createHash('sha256').update(withPath.token).digest('hex'), archive_path: '0-src/docs/report.pdf' });
    expect(rows).toContainEqual({ token_hash: createHash('sha256').update(withoutPath.token).digest('hex'), archive_path: null });
    expect(await processB.claim(withPath.token)).toMatchObject({ ...fileGrant, token: withPath.token });
    const claimed = await processB.claim(withoutPath.token);
    expect(claimed).toMatchObject(grant);
    expect(claimed).not.toHaveProperty('path');
  });

  it('of 20 concurrent claims on two stores exactly one wins', async () => {
    const { token } = await processA.issue(grant);
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => (i % 2 ? processA : processB).claim(token)));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
  });

  it('expires after 5 minutes; the sweep removes expired tokens and tokens used over a minute ago', async () => {
    const expiring = await processA.issue(grant);
    const used = await processA.issue(grant);
    await processB.claim(used.token);
    await processB.consume(used.token);
    now += 60_000;
    const live = await processA.issue(grant);
    now += TOKEN_LIFETIME_MS - 60_000;
    await expect(processB.claim(expiring.token)).rejects.toMatchObject({ status: 401, reason: 'download token expired' });
    expect(await processB.sweep()).toBe(2);
    expect([await processA.has(expiring.token), await processA.has(used.token), await processA.has(live.token)]).toEqual([false, false, true]);
  });

  it('serves a link exactly once over HTTP, back to back and concurrently', async () => {
    const body = randomBytes(1024 * 1024);
    await writeFile(join(dir, 'big.dump'), body);
    const newUrl = async () => (await server.call('POST', '/api/storage/disk/download-url', { token: DOWNLOAD, json: { file: 'big.dump' } })).body.url as string;
    const url = await newUrl();
    const sequential: number[] = [];
    for (let i = 0; i < 5; i++) sequential.push((await server.call('GET', url)).status);
    expect(sequential).toEqual([200, 401, 401, 401, 401]);
    const concurrentUrl = await newUrl();
    const concurrent = await Promise.all(Array.from({ length: 10 }, () => server.call('GET', concurrentUrl)));
    const ok = concurrent.filter((answer) => answer.status === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]!.bytes.equals(body)).toBe(true);
  });
});
