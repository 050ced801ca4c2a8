import type { NotificationContext } from '@holdfast/sdk';

/** Priority of a failure: at least 8, so it breaks through the phone's quiet settings. */
export const FAILURE_PRIORITY = 8;
/** Priority of a connection test: low, so a test does not wake anyone. */
export const TEST_PRIORITY = 1;

/** The JSON body of `POST /message` (Gotify API: message required; title, priority, extras optional). */
export interface GotifyMessage {
  title: string;
  message: string;
  priority: number;
  extras: { 'client::display': { contentType: 'text/plain' } };
}

/** Configured priority, raised to {@link FAILURE_PRIORITY} for failures (never lowered). */
export function priorityFor(configured: number, context: NotificationContext): number {
  return context.success === false ? Math.max(configured, FAILURE_PRIORITY) : configured;
}

/** Builds the message: the text, then one `name: value` line per field (empty values as a dash). */
export function renderGotifyMessage(message: string, context: NotificationContext, priority: number): GotifyMessage {
  const lines = (context.fields ?? []).map((field) => `${field.name}: ${field.value.trim() === '' ? '-' : field.value}`);
  return {
    title: context.title ?? 'Holdfast notification',
    message: lines.length > 0 ? `${message}\n\n${lines.join('\n')}` : message,
    priority,
    // Plain text: job names and errors must not be interpreted as Markdown by the clients.
    extras: { 'client::display': { contentType: 'text/plain' } },
  };
}
