import type { NotificationContext } from '@holdfast/sdk';

/** SPEC: at most 4 fields are included in a message. */
export const MAX_FIELDS = 4;
/** Twilio's limit on a message body. */
export const MAX_BODY = 1600;

/** The SMS text: title, message, then at most {@link MAX_FIELDS} `name: value` lines (empty values as a dash). */
export function renderSmsBody(message: string, context: NotificationContext): string {
  const lines = (context.fields ?? []).slice(0, MAX_FIELDS).map((field) => `${field.name}: ${field.value.trim() === '' ? '-' : field.value}`);
  const text = [context.title ?? 'Holdfast notification', message, ...lines].filter((line) => line.trim() !== '').join('\n');
  return text.length > MAX_BODY ? `${text.slice(0, MAX_BODY - 1)}…` : text;
}
