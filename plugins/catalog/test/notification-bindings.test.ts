import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KNOWN_SECRETS } from './fixture-adapters.js';
import { populate } from './fixtures.js';
import { createSite, startCatalog, type CatalogServer, type Site } from './harness.js';

describe.each(['sqlite', 'postgresql'] as const)('JobCatalog notification ports on %s', (dialect) => {
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

  it('answers the job template bindings with decrypted channels, else the default template, else none', async () => {
    const ids = await populate(server);
    const catalog = server.catalog.jobCatalog;
    const own = await catalog.notificationBindings(ids.job.id);
    expect(own).toEqual([{ channel: expect.objectContaining({ configId: ids.hook.id, kind: 'notification', adapterId: 'fake-hook' }), onSuccess: false, onPartial: true, onFailed: true }]);
    expect(own[0]!.channel.config).toMatchObject({ appToken: KNOWN_SECRETS.hookToken });

    const other = await server.call('POST', '/api/notification-templates', { name: 'Everything', bindings: [{ channelId: ids.hook.id, onSuccess: true, onPartial: true, onFailed: true }] });
    expect(other.status).toBe(201);
    expect((await server.call('PUT', `/api/jobs/${ids.job.id}`, { notificationTemplateId: other.json.id })).status).toBe(200);
    expect((await catalog.notificationBindings(ids.job.id)).map((b) => b.onSuccess)).toEqual([true]);

    // No template on the job: the default one ("Failures only", isDefault) applies.
    expect((await server.call('PUT', `/api/jobs/${ids.job.id}`, { notificationTemplateId: null })).status).toBe(200);
    expect((await catalog.notificationBindings(ids.job.id)).map((b) => [b.onSuccess, b.onFailed])).toEqual([[false, true]]);
    expect((await server.call('PUT', `/api/notification-templates/${ids.template.id}`, { isDefault: false })).status).toBe(200);
    expect(await catalog.notificationBindings(ids.job.id)).toEqual([]);
    expect(await catalog.notificationBindings('00000000-0000-0000-0000-000000000000')).toEqual([]);
  });

  it('lists notification channels, all or by id, never other kinds', async () => {
    const ids = await populate(server);
    const catalog = server.catalog.jobCatalog;
    expect((await catalog.notificationChannels()).map((c) => c.configId)).toEqual([ids.hook.id]);
    expect((await catalog.notificationChannels([ids.hook.id, ids.store.id, 'missing'])).map((c) => c.configId)).toEqual([ids.hook.id]);
    expect(await catalog.notificationChannels([])).toEqual([]);
  });
});
