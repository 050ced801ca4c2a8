import { KNOWN_SECRETS } from './fixture-adapters.js';
import type { CatalogServer, JsonValue } from './harness.js';

/** Creates one record of every kind through the API; answers their ids. */
export async function populate(server: CatalogServer) {
  const ok = (reply: { status: number; json: JsonValue; text: string }, status = 201) => {
    if (reply.status !== status) throw new Error(`expected ${status}, got ${reply.status}: ${reply.text}`);
    return reply.json;
  };
  const oauth = ok(
    await server.call('POST', '/api/credentials', {
      name: 'Drive OAuth',
      type: 'OAUTH',
      data: { clientId: 'client-1', clientSecret: KNOWN_SECRETS.oauthSecret, refreshToken: KNOWN_SECRETS.oauthRefresh, accessToken: KNOWN_SECRETS.oauthAccess },
    }),
  );
  const login = ok(
    await server.call('POST', '/api/credentials', {
      name: 'DB login',
      type: 'USERNAME_PASSWORD',
      data: { username: 'backup', password: KNOWN_SECRETS.userPassword },
    }),
  );
  const source = ok(
    await server.call('POST', '/api/adapters', {
      name: 'Main DB',
      type: 'database',
      adapterId: 'fake-db',
      config: { host: 'reachable', user: 'backup', password: KNOWN_SECRETS.dbPassword },
      primaryCredentialId: login.id,
    }),
  );
  const store = ok(
    await server.call('POST', '/api/adapters', {
      name: 'Bucket',
      type: 'storage',
      adapterId: 'fake-store',
      config: { bucket: 'b1', accessKeyId: 'AKIA1', secretAccessKey: KNOWN_SECRETS.storeSecret, sessionToken: KNOWN_SECRETS.storeSession },
    }),
  );
  const drive = ok(
    await server.call('POST', '/api/adapters', {
      name: 'Drive',
      type: 'storage',
      adapterId: 'fake-drive',
      config: { folder: 'backups' },
      primaryCredentialId: oauth.id,
    }),
  );
  const hook = ok(
    await server.call('POST', '/api/adapters', {
      name: 'Push',
      type: 'notification',
      adapterId: 'fake-hook',
      config: { webhookUrl: 'https://push.example.test/x', appToken: KNOWN_SECRETS.hookToken },
    }),
  );
  const vault = ok(await server.call('POST', '/api/vault', { name: 'Offsite key', key: KNOWN_SECRETS.vaultKey }));
  const policy = ok(await server.call('POST', '/api/retention-policies', { name: 'Ten days', config: { mode: 'gfs', daily: 10 } }));
  const naming = ok(await server.call('POST', '/api/naming-templates', { name: 'Short', pattern: '{job_name}_yyyyMMdd' }));
  const preset = ok(await server.call('POST', '/api/schedule-presets', { name: 'Nightly 1am', schedule: '0 1 * * *' }));
  const template = ok(
    await server.call('POST', '/api/notification-templates', {
      name: 'Failures only',
      isDefault: true,
      bindings: [{ channelId: hook.id, onSuccess: false, onPartial: true, onFailed: true }],
    }),
  );
  const job = ok(
    await server.call('POST', '/api/jobs', {
      name: 'Nightly main',
      sourceId: source.id,
      schedulePresetId: preset.id,
      databases: ['app'],
      compression: 'GZIP',
      encryptionProfileId: vault.id,
      namingTemplateId: naming.id,
      notificationTemplateId: template.id,
      destinations: [
        { configId: drive.id, priority: 2, retentionPolicyId: policy.id },
        { configId: store.id, priority: 1, retention: { mode: 'keep-last', count: 3 } },
      ],
    }),
  );
  return { oauth, login, source, store, drive, hook, vault, policy, naming, preset, template, job };
}
