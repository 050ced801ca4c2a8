import type { EventBus, KernelLogger } from '@holdfast/kernel';

/** Facts common to the point-in-time events; the events themselves are declared in the kernel (`HoldfastEvents`), so
 * the notifications plugin, which never imports the engine, knows their payloads. */
export type { PitrEventBase } from '@holdfast/kernel';

/** The point-in-time event names, for listeners that subscribe to all of them. */
export const PITR_EVENTS = ['pitr_gap', 'pitr_stream_stopped', 'pitr_slot_missing', 'pitr_lag'] as const;

/** Emits without waiting for listeners and never throws (a notification send must not hold the stream). */
export function emitPitrEvent<K extends (typeof PITR_EVENTS)[number]>(events: EventBus | undefined, logger: KernelLogger, name: K, payload: import('@holdfast/kernel').HoldfastEvents[K]): void {
  if (!events) return;
  void events.emit(name, payload).catch((error: unknown) => logger.warn({ err: error, event: name }, 'point-in-time event could not be delivered'));
}
