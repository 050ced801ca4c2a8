// Test adapters with secret fields in every adapter type. They follow the SDK contracts; their checks answer from
// the config alone (no network), because these tests are about how the catalog stores and hands out configs.
import {
  defineNotificationAdapter,
  defineSourceAdapter,
  defineStorageAdapter,
  inject,
  injectable,
  secret,
  TOKENS,
  z,
  type AdapterContext,
  type HealthResult,
} from '@holdfast/sdk';

const dbConfig = z.strictObject({
  host: z.string().min(1),
  port: z.int().min(1).max(65535).default(5432),
  user: z.string().min(1),
  password: secret(z.string().min(1)),
});

@injectable()
class FakeDatabase {
  constructor(@inject(TOKENS.AdapterConfig) private readonly config: z.output<typeof dbConfig>) {}
  async check(): Promise<HealthResult> {
    return this.config.host === 'reachable'
      ? { ok: true, message: 'connected', latencyMs: 1, version: '15.4' }
      : { ok: false, message: `cannot reach ${this.config.host}` };
  }
  async detectVersion() {
    return { version: '15.4' };
  }
  async listDatabases() {
    return ['app'];
  }
  async dump(): Promise<never> {
    throw new Error('not used');
  }
  async restore(): Promise<never> {
    throw new Error('not used');
  }
}

export const fakeDatabase = defineSourceAdapter({
  id: 'fake-db',
  displayName: 'Fake database',
  configSchema: dbConfig,
  capabilities: { multipleDatabases: true, listDatabases: true, restore: false, fileArchive: false },
  implementation: FakeDatabase,
});

const storeConfig = z.strictObject({
  bucket: z.string().min(1),
  accessKeyId: z.string().min(1),
  secretAccessKey: secret(z.string().min(1)),
  sessionToken: secret(z.string().min(1)).optional(),
});

@injectable()
class FakeStore {
  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: z.output<typeof storeConfig>,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}
  async check(): Promise<HealthResult> {
    // Proves the secret reached the adapter decrypted, without ever echoing it.
    const hasCredentials = this.config.secretAccessKey.length > 0;
    return { ok: hasCredentials, message: `bucket ${this.config.bucket} ok (instance ${this.context.instanceName ?? 'unsaved'})` };
  }
  async put(): Promise<never> {
    throw new Error('not used');
  }
  async get(): Promise<never> {
    throw new Error('not used');
  }
  async *list() {}
  async stat(): Promise<never> {
    throw new Error('not used');
  }
  async delete() {}
}

export const fakeStore = defineStorageAdapter({
  id: 'fake-store',
  displayName: 'Fake object store',
  configSchema: storeConfig,
  capabilities: { rangeReads: true, serverChecksum: false, parallelMetadataReads: true, symlinks: false, maxParallelParts: 4 },
  implementation: FakeStore,
});

const driveConfig = z.strictObject({ folder: z.string().min(1) });

@injectable()
class FakeDrive extends FakeStore {}

/** A cloud-drive-like destination that needs an OAUTH credential profile. */
export const fakeDrive = defineStorageAdapter({
  id: 'fake-drive',
  displayName: 'Fake cloud drive',
  configSchema: driveConfig,
  capabilities: { rangeReads: false, serverChecksum: false, parallelMetadataReads: true, symlinks: false, maxParallelParts: 1 },
  requiredCredentials: ['OAUTH'],
  implementation: FakeDrive as never,
});

const hookConfig = z.strictObject({
  webhookUrl: z.url(),
  appToken: secret(z.string().min(1)),
  priority: z.int().min(0).max(10).default(5),
});

@injectable()
class FakeHook {
  constructor(@inject(TOKENS.AdapterConfig) private readonly config: z.output<typeof hookConfig>) {}
  async send() {
    return true;
  }
  async test() {
    return { success: this.config.webhookUrl.startsWith('https://'), message: `tested ${new URL(this.config.webhookUrl).host}` };
  }
}

export const fakeHook = defineNotificationAdapter({
  id: 'fake-hook',
  displayName: 'Fake push server',
  configSchema: hookConfig,
  capabilities: { fields: false, emailRecipient: false },
  implementation: FakeHook,
});

/** Known secret values, one per secret field, so the leak test can search every byte the suite produced. */
export const KNOWN_SECRETS = {
  dbPassword: 'LEAK-db-password-7f3a91',
  storeSecret: 'LEAK-store-secret-key-2b8c',
  storeSession: 'LEAK-store-session-token-99e1',
  hookToken: 'LEAK-hook-app-token-44d0',
  userPassword: 'LEAK-credential-password-a1',
  sshKey: 'LEAK-ssh-private-key-b2',
  sshPassphrase: 'LEAK-ssh-passphrase-c3',
  accessSecret: 'LEAK-access-secret-d4',
  accessSession: 'LEAK-access-session-e5',
  token: 'LEAK-token-f6',
  smtpPassword: 'LEAK-smtp-password-07',
  webhookSecretUrl: 'https://hooks.example.test/LEAK-webhook-url-18',
  webhookSigning: 'LEAK-webhook-signing-29',
  webhookAuth: 'Bearer LEAK-webhook-auth-3a',
  oauthSecret: 'LEAK-oauth-client-secret-4b',
  oauthRefresh: 'LEAK-oauth-refresh-5c',
  oauthAccess: 'LEAK-oauth-access-6d',
  vaultKey: 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90',
} as const;

// A labelled fake engine whose version and edition come from its config, so a test can "upgrade" or "downgrade" it
// by editing the configuration (SPEC DbVersionHistory; issue 13 acceptance 5 allows a labelled fake).
const versionedConfig = z.strictObject({
  host: z.string().min(1),
  version: z.string().min(1),
  edition: z.string().min(1).optional(),
});

@injectable()
class FakeVersionedDatabase {
  constructor(@inject(TOKENS.AdapterConfig) private readonly config: z.output<typeof versionedConfig>) {}
  async check(): Promise<HealthResult> {
    return { ok: true, message: 'connected', latencyMs: 1, version: this.config.version };
  }
  async detectVersion() {
    return { version: this.config.version, ...(this.config.edition ? { edition: this.config.edition } : {}) };
  }
  async listDatabases() {
    return ['app'];
  }
  async dump(): Promise<never> {
    throw new Error('not used');
  }
  async restore(): Promise<never> {
    throw new Error('not used');
  }
}

export const fakeVersionedDatabase = defineSourceAdapter({
  id: 'fake-versioned-db',
  displayName: 'Fake database with a configurable version',
  configSchema: versionedConfig,
  capabilities: { multipleDatabases: false, listDatabases: true, restore: false, fileArchive: false },
  implementation: FakeVersionedDatabase,
});
