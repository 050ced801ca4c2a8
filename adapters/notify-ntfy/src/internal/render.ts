import type { NotificationContext } from '@holdfast/sdk';

/** Priority of a failure: 5 ("max/urgent"), so it breaks through do-not-disturb. */
export const FAILURE_PRIORITY = 5;
/** Priority of a connection test: 2 ("low"), so a test does not wake anyone. */
export const TEST_PRIORITY = 2;
/** ntfy turns longer messages into attachments; stay under its 4 096-byte limit with room for multi-byte text. */
const MAX_MESSAGE_CHARS = 3_500;

/** The JSON body of a publish to the server root (ntfy "Publish as JSON"). */
export interface NtfyMessage {
  topic: string;
  title: string;
  message: string;
  priority: number;
  tags: string[];
}

/** Configured priority, escalated to {@link FAILURE_PRIORITY} for failures. */
export function priorityFor(configured: number, context: NotificationContext): number {
  return context.success === false ? FAILURE_PRIORITY : configured;
}

/** Emoji tags ntfy shows before the title: a check mark or a cross when the outcome is known. */
function tagsFor(context: NotificationContext): string[] {
  const tags = context.success === undefined ? [] : [context.success ? 'white_check_mark' : 'x'];
  return context.eventType ? [...tags, context.eventType] : tags;
}

/** Builds the publish body: the text, then one `name: value` line per field (empty values as a dash). */
export function renderNtfyMessage(topic: string, message: string, context: NotificationContext, priority: number): NtfyMessage {
  const lines = (context.fields ?? []).map((field) => `${field.name}: ${field.value.trim() === '' ? '-' : field.value}`);
  const text = lines.length > 0 ? `${message}\n\n${lines.join('\n')}` : message;
  return {
    topic,
    title: context.title ?? 'Holdfast notification',
    message: text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…` : text,
    priority,
    tags: tagsFor(context),
  };
}
