import { Validator } from '@seriousme/openapi-schema-validator';
import { extract } from 'tar-stream';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KNOWN_SECRETS } from './fixture-adapters.js';
import { populate } from './fixtures.js';
import { createSite, startCatalog, type CatalogServer, type JsonValue, type Site } from './harness.js';

describe.each(['sqlite', 'postgresql'] as const)('catalog API on %s', (dialect) => {
  let site: Site;
  let server: CatalogServer;
  beforeEach(async () => {
    site = await createSite(dialect);
    server = await startCatalog(site);
  });
  afterEach(async () => {
    await server.close();
    await site.remove();
  });

  it('describes every catalog route in a valid OpenAPI 3.1 document with request and response schemas', async () => {
    const document = (await server.call('GET', '/api/openapi.json')).json;
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(validator.version).toBe('3.1');
    const routes = server.catalog.routes();
    expect(routes.length).toBeGreaterThan(45);
    for (const route of routes) {
      const path = route.path.replace(/:([A-Za-z_]\w*)/g, '{$1}');
      const operation = document.paths[path]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${path}`).toBeDefined();
      const success = Object.keys(operation.responses).find((status) => status.startsWith('2'))!;
      expect(operation.responses[success], `${route.method} ${path}`).toBeDefined();
      if (route.request?.body) expect(operation.requestBody, `${route.method} ${path}`).toBeDefined();
    }
  });

  it('lists installed adapters with JSON Schemas of their configs', async () => {
    const types = (await server.call('GET', '/api/adapters/types')).json as Array<Record<string, JsonValue>>;
    const drive = types.find((t) => t.adapterId === 'fake-drive')!;
    expect(drive).toMatchObject({ type: 'storage', requiredCredentials: ['OAUTH'], secretFields: [] });
    const db = types.find((t) => t.adapterId === 'fake-db')!;
    expect(db.type).toBe('database');
    expect(db.secretFields).toEqual(['password']);
    expect(db.configSchema.properties.port.default).toBe(5432);
    expect(types.some((t) => t.kind === 'retention')).toBe(false);
  });

  it('tests connections of saved and unsaved configs and records health', async () => {
    const ids = await populate(server);
    const saved = await server.call('POST', '/api/adapters/test-connection', { id: ids.source.id });
    expect(saved.json).toMatchObject({ success: true, version: '15.4' });
    const unsaved = await server.call('POST', '/api/adapters/test-connection', {
      // Another host needs the password typed again (issue 10.2): the stored one goes only to the saved host.
      id: ids.source.id, config: { host: 'elsewhere', user: 'backup', password: 'typed-again' },
    });
    expect(unsaved.json).toMatchObject({ success: false, message: 'cannot reach elsewhere' });
    const health = (await server.call('GET', `/api/adapters/${ids.source.id}`)).json;
    expect(health).toMatchObject({ lastStatus: 'OFFLINE', lastError: 'cannot reach elsewhere', consecutiveFailures: 1 });
    const channel = await server.call('POST', '/api/adapters/test-connection', {
      type: 'notification', adapterId: 'fake-hook', config: { webhookUrl: 'https://n.example.test', appToken: 't' },
    });
    expect(channel.json).toMatchObject({ success: true, message: 'tested n.example.test' });
    const noCredential = await server.call('POST', '/api/adapters/test-connection', {
      type: 'storage', adapterId: 'fake-drive', config: { folder: 'f' },
    });
    expect(noCredential.json.success).toBe(false);
    expect(noCredential.json.message).toMatch(/requires a credential profile of type OAUTH/);
    const create = await server.call('POST', '/api/adapters', { name: 'D2', type: 'storage', adapterId: 'fake-drive', config: { folder: 'f' } });
    expect(create.status).toBe(400);
  });

  it('checks permissions per adapter type and filters lists by them', async () => {
    await populate(server);
    const sourcesOnly = await server.call('GET', '/api/adapters', undefined, 'perm:sources:read');
    expect(sourcesOnly.json.map((a: { type: string }) => a.type)).toEqual(['database']);
    expect((await server.call('GET', '/api/adapters?type=storage', undefined, 'perm:sources:read')).status).toBe(403);
    const write = await server.call('POST', '/api/adapters', {
      name: 'X', type: 'storage', adapterId: 'fake-store', config: { bucket: 'b', accessKeyId: 'a', secretAccessKey: 's' },
    }, 'perm:sources:write');
    expect(write.status).toBe(403);
    // Listing jobs needs jobs:read (scoped grants of it pass and see only their jobs).
    const jobs = await server.call('GET', '/api/jobs', undefined, 'perm:sources:read');
    expect(jobs.status).toBe(403);
    expect(jobs.json).toEqual({ error: 'Forbidden' });
  });

  it('validates and stores settings', async () => {
    const defaults = (await server.call('GET', '/api/settings')).json;
    expect(defaults).toMatchObject({ maxConcurrentJobs: 1, maxConcurrentFiles: 4, stuckJobTimeoutMinutes: 360, apiPoints: 100, 'audit.retentionDays': 90 });
    for (const patch of [{ maxConcurrentJobs: 0 }, { maxConcurrentJobs: 257 }, { maxConcurrentFiles: 17 }, { systemTimezone: 'Mars/Base' }, { unknownKey: 1 }, { authPoints: 1.5 }]) {
      expect((await server.call('PUT', '/api/settings', patch)).status, JSON.stringify(patch)).toBe(400);
    }
    // Up to 256 runs at once: thousands of small jobs due in the same minute start together (docs/operations/scaling.md).
    expect((await server.call('PUT', '/api/settings', { maxConcurrentJobs: 256 })).status).toBe(200);
    const changed = await server.call('PUT', '/api/settings', { maxConcurrentJobs: 3, stuckJobTimeoutMinutes: null, systemTimezone: 'Europe/Berlin' });
    expect(changed.json).toMatchObject({ maxConcurrentJobs: 3, stuckJobTimeoutMinutes: null, systemTimezone: 'Europe/Berlin' });
    expect(await server.catalog.settings.get('maxConcurrentJobs')).toBe(3);
    const raw = await server.db.em().getKnex()('system_settings').where({ key: 'maxConcurrentJobs' }).first();
    expect(raw.value).toBe('3');
  });

  it('serves an audited recovery kit as a tar that holds the profile key', async () => {
    const ids = await populate(server);
    const reply = await fetch(`${server.url}/api/vault/${ids.vault.id}/recovery-kit`, { headers: { authorization: 'Bearer admin' } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toContain('application/x-tar');
    const files = new Map<string, string>();
    const tar = extract();
    tar.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        files.set(header.name, Buffer.concat(chunks).toString('utf8'));
        next();
      });
    });
    const done = new Promise((resolve) => tar.on('finish', resolve));
    Readable.fromWeb(reply.body as never).pipe(tar);
    await done;
    const keyFile = [...files].find(([name]) => name.endsWith('holdfast-key.txt'))?.[1];
    expect(keyFile).toContain(KNOWN_SECRETS.vaultKey);
    expect([...files.keys()].some((name) => name.endsWith('holdfast-decrypt.mjs'))).toBe(true);
    expect(server.audits.some((a) => a.action === 'RECOVERY_KIT' && a.resourceId === ids.vault.id)).toBe(true);
  });
});
