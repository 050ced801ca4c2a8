import ssh2 from 'ssh2';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WRONG_KEY_MESSAGE } from '../src/index.js';
import { KNOWN_SECRETS } from './fixture-adapters.js';
import { populate } from './fixtures.js';
import { ALL_LOG_LINES, createSite, snapshotTables, startCatalog, TEST_KEY_HEX, type CatalogServer, type Site } from './harness.js';

/** Every response of this suite, so the leak check covers bodies and headers of all of them. */
const seen: string[] = [];
const knownValues = Object.values(KNOWN_SECRETS);

async function recorded(server: CatalogServer, method: string, path: string, body?: unknown) {
  const reply = await server.call(method, path, body);
  seen.push(`${method} ${path} ${reply.status} ${JSON.stringify([...reply.headers])} ${reply.text}`);
  return reply;
}

describe.each(['sqlite', 'postgresql'] as const)('secrets on %s', (dialect) => {
  let site: Site;
  let server: CatalogServer;
  beforeEach(async () => {
    site = await createSite(dialect);
    server = await startCatalog(site);
  });
  afterEach(async () => {
    await server?.close();
    await site.remove();
  });

  it('answers secretStatus instead of values and keeps stored secrets on update, for every adapter type', async () => {
    const ids = await populate(server);
    const cases = [
      { id: ids.source.id, secrets: { password: true }, field: 'password', update: { host: 'reachable', user: 'other', password: '' } },
      { id: ids.store.id, secrets: { secretAccessKey: true, sessionToken: true }, field: 'secretAccessKey', update: { bucket: 'b1', accessKeyId: 'AKIA2' } },
      { id: ids.hook.id, secrets: { appToken: true }, field: 'appToken', update: { webhookUrl: 'https://push.example.test/x', appToken: '', priority: 7 } },
    ];
    for (const entry of cases) {
      const before = await recorded(server, 'GET', `/api/adapters/${entry.id}`);
      expect(before.json.secretStatus).toEqual(entry.secrets);
      expect(Object.keys(before.json.config)).not.toContain(entry.field);
      const updated = await recorded(server, 'PUT', `/api/adapters/${entry.id}`, { config: entry.update });
      expect(updated.status).toBe(200);
      expect(updated.json.secretStatus).toEqual(entry.secrets);
      const resolved = await server.catalog.jobCatalog.resolveAdapterConfig(entry.id);
      const original = { password: KNOWN_SECRETS.dbPassword, secretAccessKey: KNOWN_SECRETS.storeSecret, appToken: KNOWN_SECRETS.hookToken };
      expect(resolved.config[entry.field]).toBe(original[entry.field as keyof typeof original]);
    }
    // A new value replaces the stored one; an optional secret sent as null stays, one never stored reads false.
    const replaced = await recorded(server, 'PUT', `/api/adapters/${ids.store.id}`, {
      config: { bucket: 'b1', accessKeyId: 'AKIA3', secretAccessKey: 'new-secret-value' },
    });
    expect(replaced.json.secretStatus).toEqual({ secretAccessKey: true, sessionToken: true });
    expect((await server.catalog.jobCatalog.resolveAdapterConfig(ids.store.id)).config.secretAccessKey).toBe('new-secret-value');
    const bare = await recorded(server, 'POST', '/api/adapters', {
      name: 'Bare', type: 'storage', adapterId: 'fake-store', config: { bucket: 'x', accessKeyId: 'A', secretAccessKey: 'S' },
    });
    expect(bare.json.secretStatus).toEqual({ secretAccessKey: true, sessionToken: false });
    // A required secret can not be created empty.
    const missing = await recorded(server, 'POST', '/api/adapters', {
      name: 'No secret', type: 'database', adapterId: 'fake-db', config: { host: 'h', user: 'u', password: '' },
    });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatch(/config\.password|password/);
  });

  it('regression (issue 10.2): a stored secret is reused only while every target field (host, bucket, URL) is unchanged', async () => {
    const ids = await populate(server);
    const cases = [
      { id: ids.source.id, config: { host: 'elsewhere.example.test', user: 'backup' }, secret: 'password', target: 'host' },
      { id: ids.source.id, config: { host: 'reachable', port: 6543, user: 'backup' }, secret: 'password', target: 'port' },
      { id: ids.store.id, config: { bucket: 'attacker-bucket', accessKeyId: 'AKIA1', secretAccessKey: 'fresh' }, secret: 'sessionToken', target: 'bucket' },
      { id: ids.hook.id, config: { webhookUrl: 'https://attacker.example.test/x' }, secret: 'appToken', target: 'webhookUrl' },
    ];
    for (const entry of cases) {
      for (const [method, path, body] of [
        ['PUT', `/api/adapters/${entry.id}`, { config: entry.config }],
        ['POST', '/api/adapters/test-connection', { id: entry.id, config: entry.config }],
      ] as const) {
        const reply = await recorded(server, method, path, body);
        expect(reply.status, `${method} ${JSON.stringify(entry.config)}: ${reply.text}`).toBe(400);
        expect(reply.json.error).toContain(`config.${entry.secret}`);
        expect(reply.json.error).toContain(`${entry.target} changed`);
      }
    }
    // Nothing was stored by the refused updates.
    expect((await server.catalog.jobCatalog.resolveAdapterConfig(ids.source.id)).config.host).toBe('reachable');
    expect((await server.catalog.jobCatalog.resolveAdapterConfig(ids.store.id)).config.bucket).toBe('b1');
  });

  it('stores ciphertext in every secret column and reveals only through the audited route', async () => {
    const ids = await populate(server);
    await recorded(server, 'POST', '/api/credentials', { name: 'Token', type: 'TOKEN', data: { token: KNOWN_SECRETS.token } });
    await recorded(server, 'POST', '/api/credentials', { name: 'Mail', type: 'SMTP', data: { username: 'm', password: KNOWN_SECRETS.smtpPassword } });
    await recorded(server, 'POST', '/api/credentials', {
      name: 'Hook', type: 'WEBHOOK', data: { secretUrl: KNOWN_SECRETS.webhookSecretUrl, signingSecret: KNOWN_SECRETS.webhookSigning, authHeader: KNOWN_SECRETS.webhookAuth },
    });
    await recorded(server, 'POST', '/api/credentials', {
      name: 'Keys', type: 'ACCESS_KEY', data: { accessKeyId: 'AK', secretAccessKey: KNOWN_SECRETS.accessSecret, sessionToken: KNOWN_SECRETS.accessSession },
    });
    await recorded(server, 'POST', '/api/credentials', {
      name: 'SSH', type: 'SSH_KEY', data: { username: 'root', privateKey: KNOWN_SECRETS.sshKey, passphrase: KNOWN_SECRETS.sshPassphrase },
    });
    for (const path of ['/api/adapters', '/api/credentials', '/api/vault', `/api/credentials/${ids.oauth.id}/usage`, '/api/jobs']) {
      expect((await recorded(server, 'GET', path)).status).toBe(200);
    }
    const rows = await snapshotTables(server.db);
    const raw = JSON.stringify(rows);
    for (const value of knownValues) expect(raw, value).not.toContain(value);
    for (const row of rows.credential_profiles as Array<{ data: string }>) expect(row.data).toMatch(/^v1:[0-9a-f]{16}:/);
    for (const row of rows.encryption_profiles as Array<{ secret_key: string }>) expect(row.secret_key).toMatch(/^v1:/);
    const store = (rows.adapter_configs as Array<{ id: string; config: string }>).find((row) => row.id === ids.store.id)!;
    expect(JSON.parse(store.config).secretAccessKey).toMatch(/^v1:/);

    const listed = await recorded(server, 'GET', '/api/credentials');
    const ssh = listed.json.find((c: { name: string }) => c.name === 'SSH');
    expect(ssh.secretStatus).toEqual({ privateKey: true, passphrase: true });
    expect(ssh.data).toEqual({ username: 'root' });
    const reveal = await server.call('POST', `/api/credentials/${ssh.id}/reveal`);
    expect(reveal.json.data.privateKey).toBe(KNOWN_SECRETS.sshKey);
    expect(server.audits.some((a) => a.action === 'REVEAL' && a.resourceId === ssh.id)).toBe(true);
    expect((await server.call('POST', `/api/credentials/${ssh.id}/reveal`, undefined, 'perm:credentials:read')).status).toBe(403);
    // Audit details never carry values.
    const auditText = JSON.stringify(server.audits.filter((a) => a.action !== 'REVEAL'));
    for (const value of knownValues) expect(auditText, value).not.toContain(value);
  });

  it('refuses to start with the wrong system key, naming the problem', async () => {
    await populate(server);
    await server.close();
    const wrongKey = 'ff'.repeat(32);
    await expect(startCatalog(site, { HOLDFAST_ENCRYPTION_KEY: wrongKey })).rejects.toThrow(WRONG_KEY_MESSAGE);
    server = await startCatalog(site, { HOLDFAST_ENCRYPTION_KEY: TEST_KEY_HEX });
    expect((await server.call('GET', '/api/adapters')).status).toBe(200);
  });

  it('generates SSH key pairs with OpenSSH public keys and keeps the private key secret', async () => {
    for (const algorithm of ['ed25519', 'ecdsa'] as const) {
      const reply = await recorded(server, 'POST', '/api/credentials/ssh-key', { name: `gen-${algorithm}`, algorithm, passphrase: 'pp' });
      expect(reply.status).toBe(201);
      const prefix = algorithm === 'ed25519' ? 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5' : 'ecdsa-sha2-nistp256 AAAAE2VjZHNh';
      expect(reply.json.publicKey.startsWith(prefix)).toBe(true);
      expect(reply.json.secretStatus).toEqual({ privateKey: true, passphrase: true });
      expect(reply.text).not.toContain('PRIVATE KEY');
      const revealed = await server.call('POST', `/api/credentials/${reply.json.id}/reveal`);
      const privateKey = revealed.json.data.privateKey as string;
      expect(privateKey).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----/);
      // Encrypted with the passphrase: it opens with it, and not without it.
      expect(ssh2.utils.parseKey(privateKey, 'pp')).toMatchObject({ type: algorithm === 'ed25519' ? 'ssh-ed25519' : 'ecdsa-sha2-nistp256' });
      expect(ssh2.utils.parseKey(privateKey)).toBeInstanceOf(Error);
    }
  });
});

describe('secret leak check over the whole suite', () => {
  afterAll(() => {
    // Runs after both dialect suites in this file: no known value in any recorded response or log line.
    const everything = [...seen, ...ALL_LOG_LINES].join('\n');
    for (const value of knownValues) expect(everything, value).not.toContain(value);
    expect(seen.length).toBeGreaterThan(20);
    expect(ALL_LOG_LINES.length).toBeGreaterThan(10);
  });
  it('has recorded responses and logs to check', () => {
    expect(seen.length).toBeGreaterThan(0);
  });
});
