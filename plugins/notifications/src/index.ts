export { createNotificationsPlugin, NOTIFICATIONS, type NotificationsPluginOptions, type NotificationsService } from './plugin.js';
export { NotificationDispatcher, type SystemNotificationConfig, type EventNotificationConfig } from './dispatch/dispatcher.js';
export { ChannelSender, type DeliveryResult, type NotificationPayload } from './dispatch/channel-sender.js';
export { NotificationLogPruner, DEFAULT_LOG_RETENTION_DAYS } from './dispatch/log-pruner.js';
export { COLORS, SYSTEM_EVENT_DEFAULTS, SYSTEM_EVENT_TYPES, backupPayload, systemPayload, humanSize, humanDuration } from './dispatch/messages.js';
export { NotificationLogEntity, NotificationLogStore, createNotificationLogTable, type NotificationLogEntry, type NotificationLogInput, type NotificationLogWriter } from './log/notification-log.js';
export { LOG_PAGE_SIZE } from './routes/notification-routes.js';
