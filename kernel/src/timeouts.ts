import type { ChannelTestResult, NotificationChannel, NotificationContext } from './contracts/notification.js';

/** SPEC limits: a notification send is bounded to 30 s, a channel test to 10 s. */
export const NOTIFICATION_SEND_TIMEOUT_MS = 30_000;
export const NOTIFICATION_TEST_TIMEOUT_MS = 10_000;

/** Resolves `fallback` when `work` has not settled after `ms`; never rejects when `work` never rejects. */
export async function withTimeout<T>(work: Promise<T>, ms: number, fallback: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback()), ms);
    timer.unref?.();
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Sends through a channel with the kernel's timeout; a timeout, throw or rejection counts as `false`. */
export function sendBounded(
  channel: NotificationChannel,
  message: string,
  context?: NotificationContext,
  ms = NOTIFICATION_SEND_TIMEOUT_MS,
): Promise<boolean> {
  const work = Promise.resolve()
    .then(() => channel.send(message, context))
    .then((ok) => ok === true)
    .catch(() => false);
  return withTimeout(work, ms, () => false);
}

/** Tests a channel with the kernel's timeout; a timeout gives `{ success: false, message: 'Timed out ...' }`. */
export function testBounded(channel: NotificationChannel, ms = NOTIFICATION_TEST_TIMEOUT_MS): Promise<ChannelTestResult> {
  const work = Promise.resolve()
    .then(() => channel.test())
    .catch((error: unknown) => ({ success: false, message: error instanceof Error ? error.message : String(error) }));
  return withTimeout(work, ms, () => ({ success: false, message: `Timed out after ${ms / 1000} seconds` }));
}
