import type { BackupOutcomeEvent, HoldfastEvents, NotificationField } from '@holdfast/kernel';
import type { NotificationPayload } from './channel-sender.js';

/** Notification colours (hex): green success, amber partial or warning, red failure, blue information. */
export const COLORS = { success: '#16a34a', partial: '#f59e0b', failure: '#dc2626', info: '#3b82f6' } as const;

/** `1536` -> `1.5 KB` (binary units, one decimal). */
export function humanSize(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes) || bytes < 0) return '';
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** `65_000` -> `1 min 5 s`; under a minute with one decimal. */
export function humanDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const totalSeconds = Math.round(ms / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  return hours > 0 ? `${hours} h ${minutes} min ${seconds} s` : `${minutes} min ${seconds} s`;
}

/** The per-job events and the template flag each one matches. */
export const JOB_EVENTS = { backup_success: 'onSuccess', backup_partial: 'onPartial', backup_failure: 'onFailed' } as const;

/** One of the per-job events. */
export type JobEventType = keyof typeof JOB_EVENTS;

/** Title, message, fields (job, status, size, duration, path, error) and colour of a backup outcome. */
export function backupPayload(eventType: JobEventType, event: BackupOutcomeEvent): NotificationPayload {
  const job = event.jobName ?? event.jobId ?? 'unknown job';
  const outcome = {
    backup_success: { status: 'Success', verb: 'succeeded', color: COLORS.success, success: true },
    backup_partial: { status: 'Partial', verb: 'partly succeeded (some destinations failed)', color: COLORS.partial, success: false },
    backup_failure: { status: 'Failed', verb: 'failed', color: COLORS.failure, success: false },
  }[eventType];
  const fields: NotificationField[] = [
    { name: 'Job', value: job, inline: true },
    { name: 'Status', value: event.status ?? outcome.status, inline: true },
    { name: 'Size', value: humanSize(event.size), inline: true },
    { name: 'Duration', value: humanDuration(event.durationMs), inline: true },
    { name: 'Path', value: event.path ?? '' },
  ];
  if (eventType !== 'backup_success') fields.push({ name: 'Error', value: event.error ?? '' });
  return {
    title: `Backup ${outcome.status === 'Success' ? 'succeeded' : outcome.status === 'Partial' ? 'partly succeeded' : 'failed'}: ${job}`,
    message: `The backup of job "${job}" ${outcome.verb}.${event.error && eventType !== 'backup_success' ? ` ${event.error}` : ''}`,
    fields,
    color: outcome.color,
    success: outcome.success,
  };
}

/** The system events of SPEC "Notification event types" with their default (when not configured). */
export const SYSTEM_EVENT_DEFAULTS = {
  user_login: false,
  user_created: false,
  restore_complete: true,
  restore_failure: true,
  config_backup: false,
  system_error: true,
  // Decision (SPEC: not shown): enabled, category system; an engine upgrade or downgrade can break restores.
  db_version_changed: true,
  // Decision (SPEC: integrity mismatches raise a system notification): enabled, category system.
  integrity_check_failed: true,
  // Decision (issue 18): adapter health changes and storage alerts are enabled, category system.
  connection_offline: true,
  connection_online: true,
  storage_alert: true,
  // Decision (issue 45.4): every action that can lose backups notifies by default, category security.
  protected_action: true,
  // Decision (issue 43): the point-in-time archive's failures are enabled, category system; each one means restores
  // to a point in time stop short of now until someone acts.
  pitr_gap: true,
  pitr_stream_stopped: true,
  pitr_slot_missing: true,
  pitr_lag: true,
  // Decision (issue 48): like connection_offline/online, enabled, category system; runs bound to an agent need it online.
  agent_online: true,
  agent_offline: true,
} as const;

/** One of the system events. */
export type SystemEventType = keyof typeof SYSTEM_EVENT_DEFAULTS;

/** Every system event type, in a stable order. */
export const SYSTEM_EVENT_TYPES = Object.keys(SYSTEM_EVENT_DEFAULTS) as SystemEventType[];

/** The events whose configuration may use `notifyUser` (SPEC rule 5). */
export const USER_EVENTS: readonly SystemEventType[] = ['user_login', 'user_created'];

/** Title, message, fields and colour of a system event. */
export function systemPayload<K extends SystemEventType>(eventType: K, data: HoldfastEvents[K]): NotificationPayload {
  switch (eventType) {
    case 'user_login':
    case 'user_created': {
      const user = data as HoldfastEvents['user_login'];
      const isLogin = eventType === 'user_login';
      return {
        title: isLogin ? `Sign-in: ${user.userName}` : `New user: ${user.userName}`,
        message: isLogin ? `${user.userName} signed in to Holdfast.` : `The user ${user.userName} was created.`,
        fields: [
          { name: 'User', value: user.userName, inline: true },
          { name: 'Email', value: user.email, inline: true },
          { name: 'Time', value: user.timestamp },
        ],
        color: COLORS.info,
        success: true,
      };
    }
    case 'restore_complete':
    case 'restore_failure': {
      const restore = data as HoldfastEvents['restore_failure'];
      const isOk = eventType === 'restore_complete';
      return {
        title: isOk ? 'Restore completed' : 'Restore failed',
        message: isOk ? `The restore of ${restore.file} completed.` : `The restore of ${restore.file} failed.${restore.error ? ` ${restore.error}` : ''}`,
        fields: [
          { name: 'File', value: restore.file },
          { name: 'Storage', value: restore.storageId, inline: true },
          { name: 'Target', value: restore.targetSourceId ?? '', inline: true },
          ...(isOk ? [] : [{ name: 'Error', value: restore.error ?? '' }]),
        ],
        color: isOk ? COLORS.success : COLORS.failure,
        success: isOk,
      };
    }
    case 'config_backup': {
      const backup = data as HoldfastEvents['config_backup'];
      return {
        title: backup.success ? 'Configuration backup completed' : 'Configuration backup failed',
        message: backup.success ? 'The configuration backup completed.' : `The configuration backup failed.${backup.error ? ` ${backup.error}` : ''}`,
        fields: [
          { name: 'File', value: backup.file ?? '' },
          { name: 'Storage', value: backup.storageId ?? '' },
          ...(backup.success ? [] : [{ name: 'Error', value: backup.error ?? '' }]),
        ],
        color: backup.success ? COLORS.success : COLORS.failure,
        success: backup.success,
      };
    }
    case 'system_error': {
      const failure = data as HoldfastEvents['system_error'];
      return {
        title: 'System error',
        message: failure.message,
        fields: [
          { name: 'Source', value: failure.source ?? '' },
          { name: 'Error', value: failure.error ?? '' },
        ],
        color: COLORS.failure,
        success: false,
      };
    }
    case 'integrity_check_failed': {
      const check = data as HoldfastEvents['integrity_check_failed'];
      const listed = check.problems.map((p) => `${p.file} on ${p.destination}: ${p.problem}`);
      return {
        title: `Integrity check found ${check.problemCount} problem${check.problemCount === 1 ? '' : 's'}`,
        message: `The ${check.executionType === 'Verification' ? 'verification' : 'integrity check'} of ${check.scope} found ${check.problemCount} bad or missing backup(s) among ${check.checked} checked.`,
        fields: [
          { name: 'Scope', value: check.scope, inline: true },
          { name: 'Checked', value: String(check.checked), inline: true },
          { name: 'Problems', value: String(check.problemCount), inline: true },
          { name: 'Files', value: listed.slice(0, 10).join('\n') },
        ],
        color: COLORS.failure,
        success: false,
      };
    }
    case 'connection_offline':
    case 'connection_online': {
      const health = data as HoldfastEvents['connection_offline'];
      const isOnline = eventType === 'connection_online';
      return {
        title: isOnline ? `Back online: ${health.configName}` : `Offline: ${health.configName}`,
        message: isOnline
          ? `${health.configName} answers health checks again.`
          : `${health.configName} failed ${health.consecutiveFailures} health checks in a row.${health.error ? ` ${health.error}` : ''}`,
        fields: [
          { name: 'Adapter', value: `${health.type}/${health.adapterId}`, inline: true },
          { name: 'Status', value: health.status, inline: true },
          { name: 'Previous', value: health.previousStatus, inline: true },
          ...(isOnline ? [] : [{ name: 'Error', value: health.error ?? '' }]),
        ],
        color: isOnline ? COLORS.success : COLORS.failure,
        success: isOnline,
      };
    }
    case 'storage_alert': {
      const alert = data as HoldfastEvents['storage_alert'];
      return {
        title: `Storage alert (${alert.alert.replaceAll('_', ' ')}): ${alert.configName}`,
        message: alert.message,
        fields: [
          { name: 'Destination', value: alert.configName, inline: true },
          { name: 'Size', value: humanSize(alert.size), inline: true },
          { name: 'Files', value: String(alert.count), inline: true },
        ],
        color: COLORS.partial,
        success: false,
      };
    }
    case 'protected_action': {
      const taken = data as HoldfastEvents['protected_action'];
      const what = taken.action.replaceAll('.', ' ').replaceAll('-', ' ');
      const subject = typeof taken.details.file === 'string' ? taken.details.file : typeof taken.details.name === 'string' ? taken.details.name : taken.resourceId ?? '';
      return {
        title: `Protected action: ${what}${subject ? ` (${subject})` : ''}`,
        message: `${taken.actorName} took a protected action (${what}) on ${taken.resource} ${taken.resourceId ?? ''}, allowed by ${taken.proof === 'none' ? 'no second factor (the user has none)' : taken.proof}.`,
        fields: [
          { name: 'Action', value: taken.action, inline: true },
          { name: 'By', value: `${taken.actorName} (${taken.via})`, inline: true },
          { name: 'Proof', value: taken.proof, inline: true },
          { name: 'Resource', value: `${taken.resource} ${taken.resourceId ?? ''}`.trim() },
          { name: 'Time', value: taken.timestamp },
        ],
        color: COLORS.partial,
        success: true,
      };
    }
    case 'pitr_gap':
    case 'pitr_stream_stopped':
    case 'pitr_slot_missing':
    case 'pitr_lag':
      return pitrPayload(eventType, data as HoldfastEvents['pitr_gap' | 'pitr_stream_stopped' | 'pitr_slot_missing' | 'pitr_lag']);
    case 'agent_online':
    case 'agent_offline': {
      const agent = data as HoldfastEvents['agent_online'];
      const isOnline = eventType === 'agent_online';
      return {
        title: isOnline ? `Agent online: ${agent.agentName}` : `Agent offline: ${agent.agentName}`,
        message: isOnline
          ? `The agent ${agent.agentName} connected${agent.host ? ` from ${agent.host}` : ''}.`
          : `The agent ${agent.agentName} disconnected${agent.reason ? ` (${agent.reason})` : ''}.`,
        fields: [
          { name: 'Agent', value: agent.agentName, inline: true },
          { name: 'Host', value: agent.host ?? '', inline: true },
          { name: 'Time', value: agent.timestamp, inline: true },
          ...(isOnline ? [] : [{ name: 'Reason', value: agent.reason ?? '' }]),
        ],
        color: isOnline ? COLORS.success : COLORS.partial,
        success: isOnline,
      };
    }
    default: {
      const change = data as HoldfastEvents['db_version_changed'];
      const label = change.isDowngrade ? 'Downgrade' : 'Upgrade';
      const name = change.configName ?? change.configId;
      return {
        title: `Database version ${label.toLowerCase()}: ${name}`,
        message: `${name} changed from ${change.previousVersion} to ${change.newVersion}.`,
        fields: [
          { name: 'Source', value: name, inline: true },
          { name: 'Change', value: label, inline: true },
          { name: 'Previous', value: change.previousVersion, inline: true },
          { name: 'New', value: change.newVersion, inline: true },
          { name: 'Edition', value: change.edition ?? '' },
        ],
        // SPEC: downgrades carry a warning colour.
        color: change.isDowngrade ? COLORS.partial : COLORS.info,
        success: !change.isDowngrade,
      };
    }
  }
}

/** The point-in-time events (docs/pitr.md): what broke in the change-log archive of a job, and what to do. */
function pitrPayload(eventType: 'pitr_gap' | 'pitr_stream_stopped' | 'pitr_slot_missing' | 'pitr_lag', data: HoldfastEvents['pitr_gap' | 'pitr_stream_stopped' | 'pitr_slot_missing' | 'pitr_lag']): NotificationPayload {
  const job = data.jobName || data.jobId;
  const fields: NotificationField[] = [{ name: 'Job', value: job, inline: true }];
  switch (eventType) {
    case 'pitr_gap': {
      const gap = data as HoldfastEvents['pitr_gap'];
      fields.push({ name: 'Last archived', value: gap.lastArchived ?? '', inline: true }, { name: 'Next available', value: gap.nextAvailable ?? '', inline: true });
      return { title: `WAL archive gap: ${job}`, message: `${gap.message} Restores cannot cross the gap; run a new base backup of job "${job}" to restore to instants after it.`, fields, color: COLORS.failure, success: false };
    }
    case 'pitr_stream_stopped': {
      const stopped = data as HoldfastEvents['pitr_stream_stopped'];
      fields.push({ name: 'Error', value: stopped.error });
      return { title: `WAL stream stopped: ${job}`, message: `${stopped.message} Holdfast restarts it on its next pass; while it is down the recovery point grows older.`, fields, color: COLORS.failure, success: false };
    }
    case 'pitr_slot_missing': {
      const missing = data as HoldfastEvents['pitr_slot_missing'];
      fields.push({ name: 'Slot', value: missing.slot, inline: true });
      return { title: `Replication slot missing: ${job}`, message: `${missing.message} The WAL since the last archived segment is lost; a new base backup of job "${job}" starts a new window.`, fields, color: COLORS.failure, success: false };
    }
    default: {
      const lag = data as HoldfastEvents['pitr_lag'];
      fields.push({ name: 'Slot lag', value: humanSize(lag.bytes), inline: true }, { name: 'Threshold', value: humanSize(lag.thresholdBytes), inline: true });
      return { title: `WAL stream falling behind: ${job}`, message: `${lag.message} The slot keeps that WAL on the database server's disk until it is archived.`, fields, color: COLORS.partial, success: false };
    }
  }
}
