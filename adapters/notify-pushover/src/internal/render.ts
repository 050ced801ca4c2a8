import type { NotificationContext } from '@holdfast/sdk';

/** Priority of a failure: at least 1 ("high"), which bypasses the user's quiet hours. */
export const FAILURE_PRIORITY = 1;
/** Priority of a connection test: -1 ("low"), delivered without sound or vibration. */
export const TEST_PRIORITY = -1;
/** Emergency messages repeat every `retry` seconds until acknowledged or `expire` seconds pass (API: retry >= 30). */
const EMERGENCY = { retry: 60, expire: 3600 };

/** Configured priority, raised to {@link FAILURE_PRIORITY} for failures (never lowered). */
export function priorityFor(configured: number, context: NotificationContext): number {
  return context.success === false ? Math.max(configured, FAILURE_PRIORITY) : configured;
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The form fields of `POST /1/messages.json` (Pushover Message API), without the token. */
export function renderPushoverForm(
  message: string,
  context: NotificationContext,
  options: { userKey: string; priority: number; sound?: string; device?: string },
): Record<string, string> {
  const lines = (context.fields ?? []).map((field) => `${field.name}: ${field.value.trim() === '' ? '-' : field.value}`);
  const text = [message.trim() === '' ? '-' : message, ...(lines.length > 0 ? ['', ...lines] : [])].join('\n');
  return {
    user: options.userKey,
    title: cut(context.title ?? 'Holdfast notification', 250),
    message: cut(text, 1024),
    priority: String(options.priority),
    ...(options.priority === 2 ? { retry: String(EMERGENCY.retry), expire: String(EMERGENCY.expire) } : {}),
    ...(options.sound ? { sound: options.sound } : {}),
    ...(options.device ? { device: options.device } : {}),
  };
}
