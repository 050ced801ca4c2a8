// Regression (issue 10.16): SPEC.md lists fields that responses lacked (a job's `notifications`, a destination's
// `jobId`). This walks SPEC.md's resource tables and the polling representation, and checks that a response schema
// of the assembled server's OpenAPI document carries every field.
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startFullServer, type FullServer } from './support/full-server.js';

const SPEC_PATH = new URL('../../../../shared/SPEC.md', import.meta.url);

/** Field names of the table under `### <heading>` in SPEC.md (`createdAt, updatedAt` rows split). */
function specTableFields(spec: string, heading: string): string[] {
  const start = spec.indexOf(`\n### ${heading}\n`);
  if (start < 0) throw new Error(`SPEC.md has no "### ${heading}" section`);
  const section = spec.slice(start + heading.length + 6).split('\n### ')[0]!;
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Field') && !line.startsWith('|---'))
    .flatMap((line) => line.split('|')[1]!.trim().split(/,\s*/));
}

/** The backticked names of the "Execution representation returned by the polling endpoint" sentence. */
function pollingFields(spec: string): string[] {
  const sentence = spec.split('\n').find((line) => line.startsWith('Execution representation returned by the polling endpoint'));
  if (!sentence) throw new Error('SPEC.md has no polling representation sentence');
  // Status names (`Failed`) and the `metadata` column the values come from are prose, not fields.
  return [...sentence.split(': ').slice(1).join(': ').matchAll(/`([a-z][A-Za-z]*)`/g)].map((match) => match[1]!).filter((name) => name !== 'metadata');
}

type Schema = { $ref?: string; properties?: Record<string, Schema>; items?: Schema; allOf?: Schema[]; anyOf?: Schema[]; oneOf?: Schema[] };

/** Every object schema reachable from the GET responses of the document, $refs resolved. */
function responseObjects(document: any): Schema[] {
  const found: Schema[] = [];
  const seen = new Set<Schema>();
  const resolve = (schema: Schema): Schema => {
    if (!schema?.$ref) return schema;
    return schema.$ref.replace(/^#\//, '').split('/').reduce((node: any, part) => node[part], document) as Schema;
  };
  const walk = (raw: Schema | undefined) => {
    if (!raw) return;
    const schema = resolve(raw);
    if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
    seen.add(schema);
    if (schema.properties) {
      found.push(schema);
      Object.values(schema.properties).forEach(walk);
    }
    walk(schema.items);
    [...(schema.allOf ?? []), ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].forEach(walk);
  };
  for (const operations of Object.values(document.paths as Record<string, any>)) {
    for (const response of Object.values((operations.get?.responses ?? {}) as Record<string, any>)) {
      walk(response.content?.['application/json']?.schema);
    }
  }
  return found;
}

const RESOURCES = [
  { name: 'Job', marker: ['sourceId', 'destinations'], omit: [] as string[] },
  { name: 'JobDestination', marker: ['configId', 'priority'], omit: [] },
  { name: 'AdapterConfig (source, storage destination or notification channel)', marker: ['adapterId', 'secretStatus'], omit: [] },
  // The hash is never returned (SPEC says so in the same row).
  { name: 'ApiKey', marker: ['prefix', 'permissions', 'enabled'], omit: ['hashedKey'] },
];

describe('SPEC.md resource fields in the OpenAPI response schemas (regression, issue 10.16)', () => {
  let server: FullServer;
  let objects: Schema[];
  let spec: string;

  beforeAll(async () => {
    if (!existsSync(SPEC_PATH)) throw new Error(`SPEC.md not found at ${SPEC_PATH.pathname}: the repository's shared/ folder must sit beside it`);
    spec = readFileSync(SPEC_PATH, 'utf8');
    server = await startFullServer('sqlite');
    const admin = await server.signIn(ADMIN.email, ADMIN.password);
    objects = responseObjects((await server.call('GET', '/api/openapi.json', admin)).body);
  }, 60_000);
  afterAll(() => server?.close());

  it.each(RESOURCES)('a response schema carries every field of SPEC "$name"', ({ name, marker, omit }) => {
    const fields = specTableFields(spec, name).filter((field) => !omit.includes(field));
    expect(fields.length).toBeGreaterThan(3);
    const candidates = objects.filter((schema) => marker.every((field) => field in schema.properties!));
    expect(candidates.length, `no response schema has ${marker.join(' + ')}`).toBeGreaterThan(0);
    const best = candidates.map((schema) => fields.filter((field) => !(field in schema.properties!))).sort((a, b) => a.length - b.length)[0];
    expect(best, `fields of SPEC "${name}" missing from its response schema`).toEqual([]);
  });

  it('a job answers its linked channels in `notifications` and each destination its `jobId`', async () => {
    const admin = await server.signIn(ADMIN.email, ADMIN.password);
    const create = async (path: string, body: unknown) => {
      const answer = await server.call('POST', path, admin, body);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201);
      return answer.body;
    };
    const source = await create('/api/adapters', { name: 'files', type: 'database', adapterId: 'directory', config: { paths: [join(tmpdir(), 'holdfast-spec-source')] } });
    const storage = await create('/api/adapters', { name: 'disk', type: 'storage', adapterId: 'local', config: { path: join(tmpdir(), `holdfast-spec-${Date.now()}`) } });
    const channel = await create('/api/adapters', { name: 'ops hook', type: 'notification', adapterId: 'generic-webhook', config: { webhookUrl: 'http://127.0.0.1:9/hook' } });
    const template = await create('/api/notification-templates', { name: 'ops', bindings: [{ channelId: channel.id, onSuccess: false, onPartial: true, onFailed: true }] });
    const job = await create('/api/jobs', { name: 'linked', schedule: '0 3 * * *', sourceId: source.id, notificationTemplateId: template.id, destinations: [{ configId: storage.id }] });
    const answer = await server.call('GET', `/api/jobs/${job.id}`, admin);
    const view = answer.body.data ?? answer.body;
    expect(view.notifications).toEqual([
      { channelId: channel.id, name: 'ops hook', adapterId: 'generic-webhook', templateId: template.id, isDefaultTemplate: false, onSuccess: false, onPartial: true, onFailed: true },
    ]);
    expect(view.destinations).toEqual([expect.objectContaining({ jobId: job.id, configId: storage.id })]);
  });

  it('the execution polling schema carries every field of the polling representation', () => {
    const fields = pollingFields(spec);
    expect(fields).toEqual(expect.arrayContaining(['jobName', 'progress', 'stage', 'duration', 'error', 'logs']));
    const candidates = objects.filter((schema) => ['jobName', 'progress', 'duration'].every((field) => field in schema.properties!));
    const best = candidates.map((schema) => fields.filter((field) => !(field in schema.properties!))).sort((a, b) => a.length - b.length)[0];
    expect(best).toEqual([]);
  });
});
