import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { populate } from './fixtures.js';
import { createSite, snapshotTables, startCatalog, type CatalogServer, type Site } from './harness.js';

type Json = Record<string, unknown>;

/** A route under attack: a valid body to mutate, which fields refer to records, which are required. */
interface Target {
  method: 'POST' | 'PUT';
  path: string;
  valid: Json;
  refs?: string[];
  required?: string[];
}

const UNKNOWN_ID = '00000000-0000-4000-8000-00000000dead';

/** A value of a different JSON type than `value`, so the field can never validate. */
function wrongTypeOf(value: unknown): fc.Arbitrary<unknown> {
  if (typeof value === 'string') return fc.oneof(fc.integer(), fc.boolean(), fc.array(fc.integer(), { maxLength: 3 }), fc.constant({ nested: 1 }));
  if (typeof value === 'boolean') return fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.constant([true]));
  if (typeof value === 'number') return fc.oneof(fc.string({ maxLength: 5 }), fc.boolean(), fc.constant({}));
  if (Array.isArray(value)) return fc.oneof(fc.string(), fc.integer(), fc.constant({ 0: 'x' }));
  return fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.constant(['not', 'an', 'object']));
}

/** Malformed bodies as raw JSON text (so `__proto__` keys survive serialisation). */
function malformedBodies(target: Target): fc.Arbitrary<string> {
  const fields = Object.keys(target.valid);
  const text = (body: Json) => JSON.stringify(body);
  const options: Array<fc.Arbitrary<string>> = [
    fc.constantFrom(...fields).chain((field) => wrongTypeOf(target.valid[field]).map((bad) => text({ ...target.valid, [field]: bad }))),
    fc.string({ minLength: 1, maxLength: 12 }).filter((key) => !fields.includes(key) && !/^(__proto__|constructor|prototype)$/.test(key))
      .map((key) => text({ ...target.valid, [key]: 'unexpected' })),
    fc.constantFrom('__proto__', 'constructor', 'prototype').map((key) => {
      const body = text(target.valid);
      return `{"${key}":{"polluted":true},${body.slice(1)}`;
    }),
    fc.oneof(fc.integer(), fc.string({ maxLength: 20 }), fc.constant([]), fc.constant(null), fc.array(fc.integer())).map((value) => JSON.stringify(value)),
  ];
  if ('name' in target.valid) {
    options.push(fc.integer({ min: 300, max: 20_000 }).map((length) => text({ ...target.valid, name: 'n'.repeat(length) })));
  }
  if (target.required?.length) {
    options.push(fc.constantFrom(...target.required).map((field) => {
      const { [field]: _removed, ...rest } = target.valid;
      return text(rest);
    }));
  }
  if (target.refs?.length) {
    options.push(fc.constantFrom(...target.refs).map((field) => text({ ...target.valid, [field]: UNKNOWN_ID })));
  }
  return fc.oneof(...options);
}

describe.each(['sqlite', 'postgresql'] as const)('input fuzzing on %s', (dialect) => {
  let site: Site;
  let server: CatalogServer;
  let targets: Target[];
  beforeAll(async () => {
    site = await createSite(dialect);
    server = await startCatalog(site);
    const ids = await populate(server);
    const storeConfig = { bucket: 'b', accessKeyId: 'a', secretAccessKey: 's' };
    targets = [
      { method: 'POST', path: '/api/adapters', valid: { name: 'New', type: 'storage', adapterId: 'fake-store', config: storeConfig, defaultRetentionPolicyId: ids.policy.id }, refs: ['defaultRetentionPolicyId', 'primaryCredentialId'], required: ['name', 'type', 'adapterId', 'config'] },
      { method: 'PUT', path: `/api/adapters/${ids.store.id}`, valid: { name: 'Bucket', config: storeConfig }, refs: ['primaryCredentialId', 'sshCredentialId'] },
      { method: 'POST', path: '/api/credentials', valid: { name: 'New', type: 'TOKEN', data: { token: 't' } }, required: ['name', 'type', 'data'] },
      { method: 'PUT', path: `/api/credentials/${ids.login.id}`, valid: { name: 'DB login', data: { username: 'u' } } },
      { method: 'POST', path: '/api/credentials/ssh-key', valid: { name: 'Gen', algorithm: 'ed25519' }, required: ['name'] },
      { method: 'POST', path: '/api/vault', valid: { name: 'New', description: 'd' }, required: ['name'] },
      { method: 'PUT', path: `/api/vault/${ids.vault.id}`, valid: { name: 'Offsite key', description: 'd' } },
      { method: 'POST', path: '/api/retention-policies', valid: { name: 'New', config: { mode: 'keep-all' } }, required: ['name', 'config'] },
      { method: 'PUT', path: `/api/retention-policies/${ids.policy.id}`, valid: { name: 'Ten days', config: { mode: 'gfs', daily: 10 } } },
      { method: 'POST', path: '/api/naming-templates', valid: { name: 'New', pattern: '{job_name}' }, required: ['name', 'pattern'] },
      { method: 'PUT', path: `/api/naming-templates/${ids.naming.id}`, valid: { name: 'Short', pattern: '{job_name}_yyyyMMdd' } },
      { method: 'POST', path: '/api/schedule-presets', valid: { name: 'New', schedule: '0 5 * * *' }, required: ['name', 'schedule'] },
      { method: 'PUT', path: `/api/schedule-presets/${ids.preset.id}`, valid: { name: 'Nightly 1am', schedule: '0 1 * * *' } },
      { method: 'POST', path: '/api/notification-templates', valid: { name: 'New', bindings: [] }, required: ['name', 'bindings'] },
      { method: 'PUT', path: `/api/notification-templates/${ids.template.id}`, valid: { name: 'Failures only', isDefault: true } },
      {
        method: 'POST', path: '/api/jobs',
        valid: { name: 'New', schedule: '0 3 * * *', sourceId: ids.source.id, destinations: [{ configId: ids.store.id }] },
        refs: ['sourceId', 'encryptionProfileId', 'namingTemplateId', 'schedulePresetId', 'notificationTemplateId'],
        required: ['name', 'sourceId', 'destinations'],
      },
      { method: 'PUT', path: `/api/jobs/${ids.job.id}`, valid: { name: 'Nightly main', enabled: true, sourceId: ids.source.id }, refs: ['sourceId', 'encryptionProfileId', 'namingTemplateId'] },
      { method: 'POST', path: `/api/jobs/${ids.job.id}/clone`, valid: { name: 'Copy' } },
      { method: 'PUT', path: '/api/settings', valid: { maxConcurrentJobs: 2, systemTimezone: 'UTC', 'privacy.recordTriggerActor': true } },
      { method: 'POST', path: '/api/config/import', valid: { document: { format: 'x' }, mode: 'merge', dryRun: false }, required: ['document'] },
    ];
  });
  afterAll(async () => {
    await server.close();
    await site.remove();
  });

  it('answers 200 generated malformed bodies per create and update route with 4xx { error } and changes nothing', async () => {
    const before = await snapshotTables(server.db);
    let requests = 0;
    for (const target of targets) {
      await fc.assert(
        fc.asyncProperty(malformedBodies(target), async (body) => {
          requests++;
          const reply = await server.call(target.method, target.path, body);
          expect([400, 404, 409], `${target.method} ${target.path} ${body.slice(0, 200)} -> ${reply.status} ${reply.text.slice(0, 200)}`).toContain(reply.status);
          expect(typeof reply.json?.error).toBe('string');
        }),
        { numRuns: 200 },
      );
    }
    expect(requests).toBeGreaterThanOrEqual(200 * targets.length);
    expect(await snapshotTables(server.db)).toEqual(before);
  }, 300_000);
});
