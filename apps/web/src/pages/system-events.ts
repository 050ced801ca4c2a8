/**
 * The system events and whether each is on when not configured (SPEC "Notification event types"; the same table as
 * SYSTEM_EVENT_DEFAULTS of @holdfast/notifications, which is server code and not bundled here).
 */
export const SYSTEM_EVENTS: Array<{ name: string; label: string; enabledByDefault: boolean; userEvent?: boolean }> = [
  { name: 'user_login', label: 'A user signed in', enabledByDefault: false, userEvent: true },
  { name: 'user_created', label: 'A user was created', enabledByDefault: false, userEvent: true },
  { name: 'restore_complete', label: 'Restore finished', enabledByDefault: true },
  { name: 'restore_failure', label: 'Restore failed', enabledByDefault: true },
  { name: 'config_backup', label: 'Configuration backup made', enabledByDefault: false },
  { name: 'system_error', label: 'System error', enabledByDefault: true },
  { name: 'db_version_changed', label: 'Database server version changed', enabledByDefault: true },
  { name: 'integrity_check_failed', label: 'Integrity check failed', enabledByDefault: true },
  { name: 'connection_offline', label: 'Connection went offline', enabledByDefault: true },
  { name: 'connection_online', label: 'Connection back online', enabledByDefault: true },
  { name: 'storage_alert', label: 'Storage alert', enabledByDefault: true },
  { name: 'protected_action', label: 'Protected action (backup, destination or key deleted, unlock, retention changed)', enabledByDefault: true },
  { name: 'pitr_gap', label: 'Point-in-time recovery: gap in the archived WAL', enabledByDefault: true },
  { name: 'pitr_stream_stopped', label: 'Point-in-time recovery: WAL stream stopped', enabledByDefault: true },
  { name: 'pitr_slot_missing', label: 'Point-in-time recovery: replication slot missing', enabledByDefault: true },
  { name: 'pitr_lag', label: 'Point-in-time recovery: replication slot lag over the threshold', enabledByDefault: true },
  { name: 'agent_online', label: 'Remote agent connected', enabledByDefault: true },
  { name: 'agent_offline', label: 'Remote agent disconnected', enabledByDefault: true },
];
