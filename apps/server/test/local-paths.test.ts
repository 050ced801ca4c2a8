// Regression tests of issue 10.1 through the assembled server (libsql): a key holding only `destinations:write`,
// `sources:write` and the storage permissions must not reach the data directory, the system key or the database
// through a local path, neither when the config is saved nor later when a link was swapped under a saved one.
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

describe('regression (issue 10.1): local paths never reach the data directory', () => {
  let server: FullServer;
  let admin: Caller;
  let attacker: Caller;
  let work: string;

  beforeAll(async () => {
    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const issued = await server.call('POST', '/api/api-keys', admin, {
      name: 'attacker',
      permissions: ['destinations:write', 'destinations:read', 'sources:write', 'storage:read', 'storage:download', 'storage:delete'],
    });
    expect(issued.status, JSON.stringify(issued.body)).toBe(201);
    attacker = { bearer: issued.body.key ?? issued.body.rawKey };
    work = await mkdtemp(join(tmpdir(), 'holdfast-local-paths-'));
  });

  afterAll(async () => {
    await server?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const createLocal = (path: string) =>
    server.call('POST', '/api/adapters', attacker, { name: `disk ${Math.random()}`, type: 'storage', adapterId: 'local', config: { path } });

  it('refuses a local destination at the data directory, inside it, at "/", or through a symlink to it (400 naming config.path)', async () => {
    const link = join(work, 'innocent-looking');
    await symlink(server.dataDir, link);
    for (const path of [server.dataDir, join(server.dataDir, '.'), '/', link, tmpdir()]) {
      const answer = await createLocal(path);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(400);
      expect(answer.body.error).toContain('config.path');
    }
    // Outside every allowed root (HOLDFAST_LOCAL_ROOTS is the temp dir in this harness) is refused too.
    const outside = await createLocal('/etc');
    expect(outside.status).toBe(400);
    expect(outside.body.error).toMatch(/config\.path.*HOLDFAST_LOCAL_ROOTS/);
    // A connection test is held to the same rule.
    const tested = await server.call('POST', '/api/adapters/test-connection', attacker, { type: 'storage', adapterId: 'local', config: { path: '/' } });
    expect(tested.status).toBe(400);
    // An ordinary folder in an allowed root still works.
    const fine = join(work, 'fine');
    await mkdir(fine);
    expect((await createLocal(fine)).status).toBe(201);
  });

  it('cannot download system.key after the saved folder is swapped for a symlink to the data directory', async () => {
    const folder = join(work, 'swapped');
    await mkdir(folder);
    const saved = await createLocal(folder);
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    await rm(folder, { recursive: true });
    await symlink(server.dataDir, folder);
    const key = await readFile(join(server.dataDir, 'system.key'));
    const url = await server.call('POST', `/api/storage/${saved.body.id}/download-url`, attacker, { file: 'system.key', decrypt: false });
    if (url.status === 200) {
      const fetched = await fetch(`${server.url}${url.body.url}`);
      const bytes = Buffer.from(await fetched.arrayBuffer());
      expect(bytes.includes(key)).toBe(false);
      expect(fetched.status).not.toBe(200);
    } else {
      expect(url.status).toBeGreaterThanOrEqual(400);
      expect(url.status).toBeLessThan(500);
    }
    const listing = await server.call('GET', `/api/storage/${saved.body.id}/files`, attacker);
    expect(JSON.stringify(listing.body)).not.toContain('holdfast.db');
    const removal = await server.call('DELETE', `/api/storage/${saved.body.id}/files?file=system.key`, attacker);
    expect(removal.status).not.toBe(200);
    expect(await readFile(join(server.dataDir, 'system.key'))).toEqual(key);
  });

  it('refuses a directory source that reads the data directory or a folder holding it', async () => {
    for (const paths of [[server.dataDir], [join(server.dataDir, 'system.key')], ['/']]) {
      const answer = await server.call('POST', '/api/adapters', attacker, {
        name: `files ${Math.random()}`,
        type: 'database',
        adapterId: 'directory',
        config: { paths },
      });
      expect(answer.status, `${paths[0]}: ${JSON.stringify(answer.body)}`).toBe(400);
      expect(answer.body.error).toMatch(/config\.paths\.0.*HOLDFAST_ALLOW_DATA_DIR_SOURCE/);
    }
    const elsewhere = join(work, 'documents');
    await mkdir(elsewhere);
    await writeFile(join(elsewhere, 'a.txt'), 'a');
    const fine = await server.call('POST', '/api/adapters', attacker, { name: 'docs', type: 'database', adapterId: 'directory', config: { paths: [elsewhere] } });
    expect(fine.status, JSON.stringify(fine.body)).toBe(201);
  });
});
