import type { EventBus, KernelLogger } from '@holdfast/kernel';

/** Facts common to the point-in-time events: which job's change log, and what happened in one sentence. */
export interface PitrEventBase {
  jobId: string;
  jobName: string;
  message: string;
}

// The kernel's event registry grows by declaration merging (kernel/src/event-bus.ts); these are the engine's.
declare module '@holdfast/kernel' {
  interface HoldfastEvents {
    /** The archived change log has a hole: restores cannot cross it until a new base backup is taken after it. */
    pitr_gap: PitrEventBase & { lastArchived?: string; nextAvailable?: string };
    /** A job's change-log stream stopped on an error (it is restarted on the next supervisor pass). */
    pitr_stream_stopped: PitrEventBase & { error: string };
    /** The replication slot the stream resumes from is gone (dropped or invalidated): the log since is lost. */
    pitr_slot_missing: PitrEventBase & { slot: string };
  }
}

/** The point-in-time event names, for listeners that subscribe to all of them. */
export const PITR_EVENTS = ['pitr_gap', 'pitr_stream_stopped', 'pitr_slot_missing'] as const;

/** Emits without waiting for listeners and never throws (a notification send must not hold the stream). */
export function emitPitrEvent<K extends (typeof PITR_EVENTS)[number]>(events: EventBus | undefined, logger: KernelLogger, name: K, payload: import('@holdfast/kernel').HoldfastEvents[K]): void {
  if (!events) return;
  void events.emit(name, payload).catch((error: unknown) => logger.warn({ err: error, event: name }, 'point-in-time event could not be delivered'));
}
