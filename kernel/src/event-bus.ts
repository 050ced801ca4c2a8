import type { KernelLogger } from './logger.js';
import { silentLogger } from './logger.js';

/**
 * Event names and payloads. Plugins add their events by declaration merging:
 * `declare module '@holdfast/kernel' { interface HoldfastEvents { my_event: {...} } }`.
 */
 
export interface HoldfastEvents {
  user_login: { userName: string; email: string; timestamp: string };
  user_created: { userName: string; email: string; timestamp: string };
  backup_success: BackupOutcomeEvent;
  backup_partial: BackupOutcomeEvent;
  backup_failure: BackupOutcomeEvent;
  restore_complete: { executionId: string; file: string; storageId: string; targetSourceId: string | null };
  restore_failure: { executionId: string; file: string; storageId: string; targetSourceId: string | null; error?: string };
  system_error: { message: string; source?: string; error?: string };
  config_backup: { success: boolean; file?: string; storageId?: string; error?: string };
  db_version_changed: { configId: string; configName?: string; previousVersion: string; newVersion: string; edition?: string | null; isDowngrade: boolean };
  integrity_check_failed: IntegrityCheckFailedEvent;
  connection_offline: ConnectionHealthEvent;
  connection_online: ConnectionHealthEvent;
  storage_alert: StorageAlertEvent;
  /** A destination was listed and its usage recorded (engine storage statistics). */
  storage_snapshot: { configId: string; configName: string; adapterId: string; size: number; count: number; newestBackupAt: string | null };
  /** Asks the storage statistics to refresh now; listeners resolve when the refresh is done. */
  storage_stats_refresh: { reason: string };
  /** An action that can lose backups was taken (issue 45.4: backup deleted or unlocked, destination or profile deleted, retention changed). */
  protected_action: ProtectedActionEvent;
  /** The archived change log of a point-in-time job has a hole: restores cannot cross it until a new base backup. */
  pitr_gap: PitrEventBase & { lastArchived?: string; nextAvailable?: string };
  /** A job's change-log stream stopped on an error (the engine restarts it on its next supervisor pass). */
  pitr_stream_stopped: PitrEventBase & { error: string };
  /** The replication slot the stream resumes from is gone (dropped or invalidated): the log since is lost. */
  pitr_slot_missing: PitrEventBase & { slot: string };
  /** The stream's replication slot holds more unarchived log on the database server than the alert threshold. */
  pitr_lag: PitrEventBase & { bytes: number; thresholdBytes: number };
  /** A remote agent connected for the first time, or came back after `agent_offline` (agents plugin, docs/agents.md). */
  agent_online: AgentPresenceEvent;
  /** A remote agent's connection ended (closed, dead, disabled or revoked); not raised when the server stops. */
  agent_offline: AgentPresenceEvent;
}

/** Payload of `agent_online` / `agent_offline`. */
export interface AgentPresenceEvent {
  agentId: string;
  agentName: string;
  /** Host name the agent reported; null before its first hello. */
  host: string | null;
  /** Why it went offline: the close reason (`connection closed`, `no answer to pings`, `agent disabled by an administrator`, ...). */
  reason?: string;
  timestamp: string;
}

/** Facts common to the point-in-time events (docs/pitr.md): which job's change log, and what happened in one sentence. */
export interface PitrEventBase {
  jobId: string;
  jobName: string;
  message: string;
}

/** Payload of `protected_action` (identity plugin's guard, after the action succeeded). */
export interface ProtectedActionEvent {
  /** A {@link import('./ports/identity.js').ProtectedActionKind}. */
  action: string;
  resource: string;
  resourceId: string | null;
  /** Who: the user name, or the API key name. */
  actorName: string;
  userId: string;
  via: 'session' | 'apikey';
  /** How it was allowed: `totp`, `backup-code`, `passkey`, `none` (user without a second factor), `api-key`. */
  proof: string;
  details: Record<string, unknown>;
  timestamp: string;
}

/** Payload of `connection_offline` / `connection_online` (observability plugin's health checks). */
export interface ConnectionHealthEvent {
  configId: string;
  configName: string;
  /** `database` (a source) or `storage`. */
  type: string;
  adapterId: string;
  status: 'ONLINE' | 'DEGRADED' | 'OFFLINE';
  previousStatus: 'ONLINE' | 'DEGRADED' | 'OFFLINE';
  consecutiveFailures: number;
  error?: string;
}

/** Payload of `storage_alert` (observability plugin's storage statistics). */
export interface StorageAlertEvent {
  alert: 'usage_spike' | 'size_limit' | 'no_recent_backup';
  configId: string;
  configName: string;
  size: number;
  count: number;
  /** Size of the previous snapshot (`usage_spike`), the limit (`size_limit`). */
  previousSize?: number;
  limit?: number;
  /** Hours since the newest backup file (`no_recent_backup`); null when the destination holds none. */
  hoursSinceLastBackup?: number | null;
  message: string;
}

/** Payload of `integrity_check_failed`: raised once per integrity check or verification run that found problems. */
export interface IntegrityCheckFailedEvent {
  executionId: string;
  /** `IntegrityCheck` or `Verification`. */
  executionType: string;
  /** What the run covered: `all`, `job:<id>`, `storage:<id>` or `file:<storage id>:<key>`. */
  scope: string;
  /** Backups checked and bytes read. */
  checked: number;
  bytes: number;
  /** One entry per bad backup (the first 50; `problemCount` has them all). */
  problems: Array<{ file: string; destinationId: string; destination: string; problem: string }>;
  problemCount: number;
}

/** Payload of `backup_success`/`backup_partial`/`backup_failure`; the facts after `jobId` feed notifications. */
export interface BackupOutcomeEvent {
  executionId: string;
  jobId: string | null;
  jobName?: string;
  /** Final execution status (`Success`, `Partial`, `Failed`). */
  status?: string;
  /** Bytes written (the backup file size), when known. */
  size?: number | null;
  /** Storage key of the backup file, when one was written. */
  path?: string | null;
  durationMs?: number;
  error?: string;
}

/** A listener; may be async. Its failures are logged, never thrown back to the emitter. */
export type EventListener<T> = (payload: T) => void | Promise<void>;

/** A typed publish/subscribe bus. Emitting never throws because of a listener. */
export class EventBus {
  private readonly listeners = new Map<keyof HoldfastEvents, Set<EventListener<never>>>();

  constructor(private readonly logger: KernelLogger = silentLogger) {}

  /** Subscribe; returns the unsubscribe function. */
  on<K extends keyof HoldfastEvents>(name: K, listener: EventListener<HoldfastEvents[K]>): () => void {
    let set = this.listeners.get(name);
    if (!set) {
      set = new Set();
      this.listeners.set(name, set);
    }
    set.add(listener as EventListener<never>);
    return () => set.delete(listener as EventListener<never>);
  }

  /** Delivers to every listener and resolves when all have settled. */
  async emit<K extends keyof HoldfastEvents>(name: K, payload: HoldfastEvents[K]): Promise<void> {
    const set = this.listeners.get(name);
    if (!set || set.size === 0) return;
    await Promise.all(
      [...set].map(async (listener) => {
        try {
          await (listener as EventListener<HoldfastEvents[K]>)(payload);
        } catch (error) {
          this.logger.error({ err: error, event: name }, 'event listener failed');
        }
      }),
    );
  }

  /** Number of listeners of an event (for diagnostics and tests). */
  listenerCount(name: keyof HoldfastEvents): number {
    return this.listeners.get(name)?.size ?? 0;
  }
}
