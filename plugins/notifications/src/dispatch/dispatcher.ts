import type { AdapterRegistry, BackupOutcomeEvent, HoldfastEvents, JobCatalog, KernelLogger, ResolvedAdapterConfig, SettingsReader } from '@holdfast/kernel';
import type { ChannelSender, DeliveryResult } from './channel-sender.js';
import { backupPayload, JOB_EVENTS, SYSTEM_EVENT_DEFAULTS, systemPayload, USER_EVENTS, type JobEventType, type SystemEventType } from './messages.js';

/** One event's entry of `notifications.config`. */
export interface EventNotificationConfig {
  enabled: boolean;
  channels: string[] | null;
  notifyUser: 'none' | 'also' | 'only';
}

/** The setting `notifications.config` (SPEC "System notification configuration"). */
export interface SystemNotificationConfig {
  globalChannels: string[];
  events: Partial<Record<string, EventNotificationConfig>>;
}

const EMPTY_CONFIG: SystemNotificationConfig = { globalChannels: [], events: {} };

/** Ports the dispatcher reads; resolved lazily because they are registered by other plugins. */
export interface DispatcherPorts {
  catalog: () => JobCatalog;
  settings: () => SettingsReader | undefined;
  registry: () => AdapterRegistry;
  sender: ChannelSender;
  logger: KernelLogger;
}

/** Per-job and system notification dispatch (SPEC "Events"). No method throws to its caller. */
export class NotificationDispatcher {
  constructor(private readonly ports: DispatcherPorts) {}

  /** Per-job: every channel of the job's template whose flag matches the outcome gets one attempt. */
  async dispatchJobEvent(eventType: JobEventType, event: BackupOutcomeEvent): Promise<DeliveryResult[]> {
    try {
      if (!event.jobId) return [];
      const flag = JOB_EVENTS[eventType];
      const bindings = await this.ports.catalog().notificationBindings(event.jobId);
      const payload = backupPayload(eventType, event);
      return await Promise.all(
        bindings.filter((binding) => binding[flag]).map((binding) => this.ports.sender.send(binding.channel, eventType, payload, { executionId: event.executionId })),
      );
    } catch (error) {
      this.ports.logger.error({ err: error, eventType, executionId: event.executionId }, 'per-job notification dispatch failed');
      return [];
    }
  }

  /** SPEC "Dispatch rules for a system event" 1-6. */
  async dispatchSystemEvent<K extends SystemEventType>(eventType: K, data: HoldfastEvents[K]): Promise<DeliveryResult[]> {
    try {
      const config = await this.config();
      const entry = config.events[eventType];
      // Rule 1: the configured value, else the event's default.
      if (!(entry?.enabled ?? SYSTEM_EVENT_DEFAULTS[eventType])) return [];
      // Rule 2: the event's own list, else the global list.
      const channels = await this.channels(entry?.channels ?? config.globalChannels);
      // Rule 3.
      const payload = systemPayload(eventType, data);
      const notifyUser = USER_EVENTS.includes(eventType) ? (entry?.notifyUser ?? 'none') : 'none';
      const executionId = (data as { executionId?: string }).executionId ?? null;
      const sends: Array<Promise<DeliveryResult>> = [];
      // Rule 4.
      if (notifyUser !== 'only') for (const channel of channels) sends.push(this.ports.sender.send(channel, eventType, payload, { executionId }));
      // Rule 5: email-kind channels, addressed to the affected user.
      const email = (data as { email?: string }).email;
      if (notifyUser !== 'none' && email) {
        for (const channel of channels.filter((candidate) => this.isEmailKind(candidate))) {
          sends.push(this.ports.sender.send(channel, eventType, payload, { executionId, recipient: email }));
        }
      }
      return await Promise.all(sends);
    } catch (error) {
      this.ports.logger.error({ err: error, eventType }, 'system notification dispatch failed');
      return [];
    }
  }

  /** The channels a test for `eventType` (or the global list) would use, or exactly `channelIds`. */
  async testTargets(request: { channelIds?: string[]; eventType?: string }): Promise<{ channels: ResolvedAdapterConfig[]; missing: string[] }> {
    let ids = request.channelIds;
    if (!ids) {
      const config = await this.config();
      ids = (request.eventType ? config.events[request.eventType]?.channels : null) ?? config.globalChannels;
    }
    const channels = await this.ports.catalog().notificationChannels(ids);
    const found = new Set(channels.map((channel) => channel.configId));
    return { channels, missing: ids.filter((id) => !found.has(id)) };
  }

  async config(): Promise<SystemNotificationConfig> {
    const settings = this.ports.settings();
    if (!settings) return EMPTY_CONFIG;
    const value = await settings.get<SystemNotificationConfig | null>('notifications.config').catch((error: unknown) => {
      this.ports.logger.warn({ err: error }, 'cannot read notifications.config; using the defaults');
      return null;
    });
    return { globalChannels: value?.globalChannels ?? [], events: value?.events ?? {} };
  }

  private async channels(ids: string[]): Promise<ResolvedAdapterConfig[]> {
    if (ids.length === 0) return [];
    const channels = await this.ports.catalog().notificationChannels(ids);
    if (channels.length < new Set(ids).size) this.ports.logger.warn({ ids }, 'some configured notification channels no longer exist');
    return channels;
  }

  /** A channel that can address a user by email (capability declared by its adapter). */
  private isEmailKind(channel: ResolvedAdapterConfig): boolean {
    const definition = this.ports.registry().get('notification', channel.adapterId)?.definition as { capabilities?: { emailRecipient?: boolean } } | undefined;
    return definition?.capabilities?.emailRecipient === true;
  }
}
