// A real server for the notifications plugin: persistence (libsql or PostgreSQL), the http plugin and this plugin,
// with the real generic-webhook and email channel adapters. The catalog, settings and identity are doubles of their
// kernel ports: maps of channel configurations and template bindings, a settings map, and a Bearer authenticator
// where `perm:a,b` grants exactly those permissions.
import { startPluginApp } from '@holdfast/tooling/harness/plugin-app';
import { createHttpPlugin } from '@holdfast/http';
import {
  TOKENS,
  type AnyAdapterDefinition,
  type EventBus,
  type AuthContext,
  type HoldfastPlugin,
  type JobCatalog,
  type NotificationBinding,
  type ResolvedAdapterConfig,
} from '@holdfast/kernel';
import notifyEmail from '@holdfast/notify-email';
import notifyWebhook from '@holdfast/notify-generic-webhook';
import { createPersistencePlugin } from '@holdfast/persistence';
import { createTestSite, type TestDialect, type TestSite } from '@holdfast/tooling/harness/test-site';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { createNotificationsPlugin, NOTIFICATIONS, type NotificationsPluginOptions, type NotificationsService } from '../../src/index.js';
import { hangingChannel } from './fixture-channels.js';

/** The two catalog port methods this plugin calls, over in-memory maps. */
export class ChannelCatalog implements Pick<JobCatalog, 'notificationBindings' | 'notificationChannels'> {
  readonly channels = new Map<string, ResolvedAdapterConfig>();
  readonly bindings = new Map<string, Array<{ channelId: string; onSuccess: boolean; onPartial: boolean; onFailed: boolean }>>();

  addChannel(configId: string, adapterId: string, config: Record<string, unknown>): ResolvedAdapterConfig {
    const channel: ResolvedAdapterConfig = { configId, name: `${adapterId} ${configId}`, kind: 'notification', adapterId, config, credentials: {} };
    this.channels.set(configId, channel);
    return channel;
  }

  async notificationBindings(jobId: string): Promise<NotificationBinding[]> {
    return (this.bindings.get(jobId) ?? []).map(({ channelId, ...flags }) => ({ channel: this.channels.get(channelId)!, ...flags }));
  }

  async notificationChannels(ids?: string[]): Promise<ResolvedAdapterConfig[]> {
    return [...this.channels.values()].filter((channel) => !ids || ids.includes(channel.configId));
  }
}

function identityOf(token: string): AuthContext | null {
  if (!token.startsWith('perm:')) return null;
  return { userId: `user-${token}`, permissions: token.slice(5).split(','), isSuperAdmin: false, authMethod: 'apikey', apiKeyId: 'k' };
}

export interface NotificationServer {
  url: string;
  container: DependencyContainer;
  catalog: ChannelCatalog;
  settings: Map<string, unknown>;
  events: EventBus;
  service: NotificationsService;
  call(method: string, path: string, options?: { token?: string; json?: unknown }): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startNotificationServer(dialect: TestDialect = 'sqlite', options: NotificationsPluginOptions = {}): Promise<NotificationServer> {
  const site: TestSite = await createTestSite(dialect, 'notifications');
  const container = rootContainer.createChildContainer();
  const adapters = [notifyWebhook, notifyEmail, hangingChannel] as unknown as AnyAdapterDefinition[];
  const catalog = new ChannelCatalog();
  const settings = new Map<string, unknown>();
  container.register(TOKENS.JobCatalog, { useValue: catalog as unknown as JobCatalog });
  container.register(TOKENS.Settings, { useValue: { get: async <T>(key: string) => settings.get(key) as T } });
  container.register(TOKENS.Authenticator, { useValue: { authenticate: async (request) => identityOf(String(request.headers.authorization ?? '').replace(/^Bearer /, '')) } });
  const plugins: HoldfastPlugin[] = [createPersistencePlugin(), createHttpPlugin(), createNotificationsPlugin(options)];
  const app = await startPluginApp({ site, container, plugins, core: { runtime: { version: '0.1.0-test' }, adapters } });
  const url = app.url;
  return {
    url,
    container,
    catalog,
    settings,
    events: container.resolve(TOKENS.EventBus),
    service: container.resolve(NOTIFICATIONS),
    async call(method, path, { token, json } = {}) {
      const headers: Record<string, string> = {};
      if (token) headers.authorization = `Bearer ${token}`;
      if (json !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${url}${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
      const text = await response.text();
      return { status: response.status, body: text ? (JSON.parse(text) as unknown) : undefined };
    },
    close: () => app.close(),
  };
}
