import { generateAgeIdentity } from '@holdfast/kernel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rotateSystemKey, SecretBox, WRONG_KEY_MESSAGE } from '../src/index.js';
import { KNOWN_SECRETS } from './fixture-adapters.js';
import { populate } from './fixtures.js';
import { createSite, snapshotTables, startCatalog, TEST_KEY_HEX, type CatalogServer, type Site } from './harness.js';

describe.each(['sqlite', 'postgresql'] as const)('system key rotation on %s', (dialect) => {
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

  it('re-encrypts every secret so only the new key starts the catalog', async () => {
    const ids = await populate(server);
    // A public-key profile (issue 45) seals an empty string: rotated like the others, and it keeps its recipient.
    const { recipient } = generateAgeIdentity();
    const publicOnly = (await server.call('POST', '/api/vault', { name: 'Owner public key', publicKey: recipient })).json as { id: string };
    const current = new SecretBox(Buffer.from(TEST_KEY_HEX, 'hex'));
    const nextHex = '42'.repeat(32);
    const wrong = new SecretBox(Buffer.alloc(32, 9));
    await expect(rotateSystemKey(server.db.em(), wrong, new SecretBox(Buffer.from(nextHex, 'hex')))).rejects.toThrow(WRONG_KEY_MESSAGE);
    const before = JSON.stringify(await snapshotTables(server.db));
    const report = await rotateSystemKey(server.db.em(), current, new SecretBox(Buffer.from(nextHex, 'hex')));
    expect(report).toEqual({ adapterSecrets: 4, credentialProfiles: 2, encryptionProfiles: 2, otherSecrets: [] });
    expect(JSON.stringify(await snapshotTables(server.db))).not.toEqual(before);
    await server.close();
    await expect(startCatalog(site)).rejects.toThrow(WRONG_KEY_MESSAGE);
    server = await startCatalog(site, { HOLDFAST_ENCRYPTION_KEY: nextHex });
    const plan = await server.catalog.jobCatalog.resolveRunPlan(ids.job.id);
    expect(plan.source.config.password).toBe(KNOWN_SECRETS.dbPassword);
    expect(plan.encryption?.key.toString('hex')).toBe(KNOWN_SECRETS.vaultKey);
    expect((await server.call('GET', `/api/vault/${publicOnly.id}`)).json).toMatchObject({ kind: 'public-key', publicKey: recipient });
  });
});
