import type { NotificationContext } from '@holdfast/sdk';
import type { ParseMode } from '../config.js';
import { formatterFor } from './escape.js';

/** Telegram's limit on a message's text after entity parsing. */
export const MAX_TEXT = 4096;
const MAX_TITLE = 256;
const MAX_FIELD_VALUE = 300;

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, Math.max(0, max - 1))}…` : text;
}

/**
 * Builds the text of `sendMessage` in `mode`: bold title, message, bold field names with values, an italic footer.
 * Lengths are budgeted on the visible text (what Telegram counts), before escaping.
 */
export function renderTelegramText(message: string, context: NotificationContext, mode: ParseMode): string {
  const format = formatterFor(mode);
  const title = cut(context.title ?? 'Holdfast notification', MAX_TITLE);
  const footer = context.eventType ? `Holdfast · ${context.eventType}` : 'Holdfast';
  const fields = (context.fields ?? []).map((field) => ({ name: cut(field.name, 100), value: cut(field.value.trim() === '' ? '-' : field.value, MAX_FIELD_VALUE) }));
  const fixed = title.length + footer.length + 6;
  const fieldLength = () => fields.reduce((sum, field) => sum + field.name.length + field.value.length + 3, 0);
  // Keep at least 500 characters for the message: drop trailing fields before cutting it further.
  while (fields.length > 0 && fixed + fieldLength() + 500 > MAX_TEXT) fields.pop();
  const body = cut(message.trim() === '' ? '-' : message, MAX_TEXT - fixed - fieldLength());
  const parts = [format.bold(title), format.text(body)];
  if (fields.length > 0) parts.push(fields.map((field) => `${format.bold(`${field.name}:`)} ${format.text(field.value)}`).join('\n'));
  parts.push(format.italic(footer));
  return parts.join('\n\n');
}
