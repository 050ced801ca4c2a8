import { ORM_DATABASE } from '@holdfast/orm-port';
import { deliveryStatsPort } from './log/delivery-stats.js';
import { optionalToken, resolveOptional, TOKENS, type BackupOutcomeEvent, type HoldfastPlugin, type KernelLogger } from '@holdfast/kernel';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { ChannelSender } from './dispatch/channel-sender.js';
import { NotificationDispatcher } from './dispatch/dispatcher.js';
import { NotificationLogPruner } from './dispatch/log-pruner.js';
import { JOB_EVENTS, SYSTEM_EVENT_TYPES, type JobEventType, type SystemEventType } from './dispatch/messages.js';
import { createNotificationLogTable, NotificationLogEntity, NotificationLogStore, type NotificationLogWriter } from './log/notification-log.js';
import { notificationRoutes } from './routes/notification-routes.js';

/** The running notifications service (tests and other wiring reach it through {@link NOTIFICATIONS}). */
export interface NotificationsService {
  dispatcher: NotificationDispatcher;
  sender: ChannelSender;
  store: NotificationLogStore;
  pruner: NotificationLogPruner;
  /** Resolves when every dispatch started so far has settled. */
  idle(): Promise<void>;
}

/** The notifications service in the container. */
export const NOTIFICATIONS = Symbol.for('holdfast:notifications') as InjectionToken<NotificationsService>;

/** Options of {@link createNotificationsPlugin}. */
export interface NotificationsPluginOptions {
  /** Bound of one send (default: the kernel's 30 s); tests pass a short one. */
  sendTimeoutMs?: number;
  /** Interval of log pruning (default 6 hours). */
  pruneIntervalMs?: number;
  /** Replaces the log writer (tests of rule 6: a failing log write). */
  logWriter?: NotificationLogWriter;
}

/**
 * The notifications plugin: sends per-job notifications from the engine's outcome events through the job's
 * notification template, system notifications per `notifications.config`, records every attempt in
 * `notification_log`, serves the log and channel tests, and prunes old entries. Needs `TOKENS.Database`,
 * `TOKENS.JobCatalog`, `TOKENS.AdapterRegistry` and `TOKENS.EventBus`; reads `TOKENS.Settings` when registered.
 */
export function createNotificationsPlugin(options: NotificationsPluginOptions = {}): HoldfastPlugin {
  let service: NotificationsService | undefined;
  const pending = new Set<Promise<unknown>>();
  const unsubscribe: Array<() => void> = [];
  const serviceOf = (container: DependencyContainer): NotificationsService => {
    if (service) return service;
    const base = container.resolve(TOKENS.Logger);
    const logger: KernelLogger = base.child?.({ plugin: 'notifications' }) ?? base;
    const settings = () => resolveOptional(container, TOKENS.Settings);
    const store = new NotificationLogStore(() => container.resolve(ORM_DATABASE));
    const registry = () => container.resolve(TOKENS.AdapterRegistry);
    const sender = new ChannelSender({ container, registry, log: options.logWriter ?? store, logger, sendTimeoutMs: options.sendTimeoutMs });
    const dispatcher = new NotificationDispatcher({ catalog: () => container.resolve(TOKENS.JobCatalog), settings, registry, sender, logger });
    const pruner = new NotificationLogPruner(store, settings, logger, options.pruneIntervalMs);
    service = {
      dispatcher,
      sender,
      store,
      pruner,
      async idle() {
        while (pending.size > 0) await Promise.allSettled([...pending]);
      },
    };
    return service;
  };
  // Listeners return at once: a slow channel (up to the 30 s bound) must not hold the engine's queue slot.
  const track = (work: Promise<unknown>) => {
    pending.add(work);
    void work.finally(() => pending.delete(work));
  };
  return {
    name: 'notifications',
    provides: [NOTIFICATIONS, TOKENS.DeliveryStats],
    requires: [
      ORM_DATABASE,
      TOKENS.AdapterRegistry,
      TOKENS.JobCatalog,
      TOKENS.EventBus,
      TOKENS.Logger,
      optionalToken(TOKENS.Settings),
    ],
    entities: [NotificationLogEntity],
    migrations: [createNotificationLogTable],
    register(container) {
      container.register(NOTIFICATIONS, { useFactory: serviceOf });
      // Observability's metrics read the delivery figures through this port, never the log table itself.
      container.register(TOKENS.DeliveryStats, { useValue: deliveryStatsPort(() => container.resolve(ORM_DATABASE)) });
    },
    routes(container) {
      return notificationRoutes({ store: () => serviceOf(container).store, dispatcher: () => serviceOf(container).dispatcher, sender: () => serviceOf(container).sender });
    },
    listen(container) {
      const { dispatcher } = serviceOf(container);
      const events = container.resolve(TOKENS.EventBus);
      for (const name of Object.keys(JOB_EVENTS) as JobEventType[]) {
        unsubscribe.push(events.on(name, (event: BackupOutcomeEvent) => track(dispatcher.dispatchJobEvent(name, event))));
      }
      for (const name of SYSTEM_EVENT_TYPES) {
        unsubscribe.push(events.on(name, (data) => track(dispatcher.dispatchSystemEvent(name as SystemEventType, data as never))));
      }
    },
    async start(container) {
      serviceOf(container).pruner.start();
    },
    async stop() {
      for (const off of unsubscribe.splice(0)) off();
      await service?.pruner.stop();
      await service?.idle();
    },
  };
}
