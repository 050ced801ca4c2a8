// A real server for the storage browser: persistence (libsql or PostgreSQL), the http plugin, this plugin, and the
// engine's real BackupReader (only its registration; no queue runs). The catalog and identity are replaced by
// doubles of their kernel ports: a map of adapter configurations and a Bearer authenticator where
// `perm:a,b` grants exactly those permissions.
import { startPluginApp } from '@holdfast/tooling/harness/plugin-app';
import { createEnginePlugin } from '@holdfast/engine';
import { createHttpPlugin } from '@holdfast/http';
import {
  NotFoundError,
  TOKENS,
  type AnyAdapterDefinition,
  type EventBus,
  type AuditEntry,
  type AuthContext,
  type HoldfastPlugin,
  type JobCatalog,
  type ResolvedAdapterConfig,
} from '@holdfast/kernel';
import { createPersistencePlugin } from '@holdfast/persistence';
import { createTestSite, type TestDialect, type TestSite } from '@holdfast/tooling/harness/test-site';
import storageLocal from '@holdfast/storage-local';
import storageS3 from '@holdfast/storage-s3';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { createStorageBrowserPlugin, type StorageBrowserPluginOptions } from '../../src/index.js';
import { lateEndStorage, unreachableStorage } from './fixture-adapters.js';

/** Only the parts of the catalog port the storage browser and the backup reader call. */
export class ConfigCatalog implements Pick<JobCatalog, 'resolveAdapterConfig' | 'encryptionKey'> {
  readonly configs = new Map<string, ResolvedAdapterConfig>();
  readonly keys = new Map<string, Buffer>();
  add(config: Omit<ResolvedAdapterConfig, 'credentials'>): void {
    this.configs.set(config.configId, { credentials: {}, ...config });
  }
  async resolveAdapterConfig(configId: string): Promise<ResolvedAdapterConfig> {
    const config = this.configs.get(configId);
    if (!config) throw new NotFoundError('Adapter configuration not found');
    return config;
  }
  async encryptionKey(profileId: string): Promise<Buffer> {
    const key = this.keys.get(profileId);
    if (!key) throw new NotFoundError('Encryption profile not found');
    return key;
  }
}

function identityOf(token: string): AuthContext | null {
  if (!token.startsWith('perm:')) return null;
  return { userId: `user-${token}`, permissions: token.slice(5).split(','), isSuperAdmin: false, authMethod: 'apikey', apiKeyId: 'k' };
}

export interface BrowserServer {
  url: string;
  container: DependencyContainer;
  catalog: ConfigCatalog;
  events: EventBus;
  audits: AuditEntry[];
  call(method: string, path: string, options?: { token?: string; json?: unknown }): Promise<{ status: number; headers: Headers; body: any; bytes: Buffer }>;
  close(): Promise<void>;
}

export async function startBrowserServer(dialect: TestDialect = 'sqlite', options: StorageBrowserPluginOptions = {}): Promise<BrowserServer> {
  const site: TestSite = await createTestSite(dialect, 'storage-browser');
  const container = rootContainer.createChildContainer();
  const adapters = [storageLocal, storageS3, unreachableStorage, lateEndStorage] as unknown as AnyAdapterDefinition[];
  const catalog = new ConfigCatalog();
  const audits: AuditEntry[] = [];
  container.register(TOKENS.JobCatalog, { useValue: catalog as unknown as JobCatalog });
  container.register(TOKENS.Authenticator, { useValue: { authenticate: async (request) => identityOf(String(request.headers.authorization ?? '').replace(/^Bearer /, '')) } });
  container.register(TOKENS.AuditWriter, { useValue: { write: async (entry) => void audits.push(entry) } });
  // Only the engine's registrations (its BackupReader); its tables, routes and queue are not part of this server.
  createEnginePlugin({ env: {} }).register?.(container);
  const plugins: HoldfastPlugin[] = [createPersistencePlugin(), createHttpPlugin(), createStorageBrowserPlugin(options)];
  const app = await startPluginApp({ site, container, plugins, core: { runtime: { version: '0.1.0-test' }, adapters } });
  const url = app.url;
  return {
    url,
    container,
    catalog,
    events: container.resolve(TOKENS.EventBus),
    audits,
    async call(method, path, { token, json } = {}) {
      const headers: Record<string, string> = {};
      if (token) headers.authorization = `Bearer ${token}`;
      if (json !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${url}${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
      const bytes = Buffer.from(await response.arrayBuffer());
      let body: unknown;
      try {
        body = bytes.length ? JSON.parse(bytes.toString('utf8')) : undefined;
      } catch {
        body = undefined;
      }
      return { status: response.status, headers: response.headers, body, bytes };
    },
    close: () => app.close(),
  };
}
