// Issue 12 acceptance 5 (and 13, 14): every adapter package of the repository is installed in the assembled server
// and listed by `GET /api/adapters/types` with the JSON Schema of its config, so forms can be drawn for it.
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startFullServer, type FullServer } from './support/full-server.js';

const adaptersFolder = new URL('../../../adapters/', import.meta.url);
const packages = readdirSync(adaptersFolder).map((name) => {
  const json = JSON.parse(readFileSync(new URL(`${name}/package.json`, adaptersFolder), 'utf8')) as { holdfast: { kind: string; id: string } };
  return { folder: name, ...json.holdfast };
});
const TYPE_OF_KIND: Record<string, string> = { source: 'database', storage: 'storage', notification: 'notification' };

describe('GET /api/adapters/types on the assembled server', () => {
  let server: FullServer;
  let types: Array<{ type: string; adapterId: string; configSchema: { type?: string; properties?: Record<string, unknown> } }>;

  beforeAll(async () => {
    server = await startFullServer('sqlite');
    const admin = await server.signIn(ADMIN.email, ADMIN.password);
    const answer = await server.call('GET', '/api/adapters/types', admin);
    expect(answer.status).toBe(200);
    types = answer.body.data ?? answer.body;
  }, 60_000);
  afterAll(() => server?.close());

  const configurable = packages.filter((entry) => entry.kind in TYPE_OF_KIND);
  it('the repository has the adapters of this wave', () => {
    expect(configurable.map((entry) => entry.folder)).toEqual(
      expect.arrayContaining(['storage-s3', 'storage-ftp', 'storage-smb', 'storage-webdav', 'storage-gdrive', 'source-mysql', 'source-redis', 'source-sqlite', 'notify-telegram']),
    );
  });

  it.each(configurable)('lists $folder with a JSON Schema of its config', ({ kind, id }) => {
    const found = types.find((entry) => entry.adapterId === id && entry.type === TYPE_OF_KIND[kind]);
    expect(found, `${kind}-${id} missing from /api/adapters/types`).toBeDefined();
    expect(found!.configSchema.type).toBe('object');
    expect(Object.keys(found!.configSchema.properties ?? {}).length).toBeGreaterThan(0);
  });
});
