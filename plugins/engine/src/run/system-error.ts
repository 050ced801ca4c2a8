import type { EventBus } from '@holdfast/kernel';

/** A failure repeating on every poll raises `system_error` at most once per source in this window. */
export const SYSTEM_ERROR_REPEAT_MS = 10 * 60_000;

/**
 * When each source last raised, per bus: one bus is one server, and the window belongs to that server (a module-wide
 * map would let one server in a process silence another's first failure, as several do in tests or embeddings).
 */
const lastRaisedByBus = new WeakMap<EventBus, Map<string, number>>();

/**
 * Raises `system_error` for an unexpected failure of background work (queue, scheduler, storage statistics). Never
 * throws and never waits for the listeners (a notification send must not hold a loop).
 */
export function raiseSystemError(events: EventBus | undefined, source: string, message: string, error: unknown): void {
  if (!events) return;
  let lastRaised = lastRaisedByBus.get(events);
  if (!lastRaised) lastRaisedByBus.set(events, (lastRaised = new Map()));
  const now = Date.now();
  if (now - (lastRaised.get(source) ?? -Infinity) < SYSTEM_ERROR_REPEAT_MS) return;
  lastRaised.set(source, now);
  void events.emit('system_error', { message, source, error: error instanceof Error ? error.message : String(error) }).catch(() => undefined);
}
