import type { NotificationContext } from '@holdfast/sdk';

/** Apprise notification types (`apprise.NOTIFY_TYPES`). */
export type AppriseType = 'info' | 'success' | 'warning' | 'failure';

/** The JSON body of `POST /notify/{key}` or `POST /notify/` (Apprise API). */
export interface AppriseMessage {
  title: string;
  body: string;
  type: AppriseType;
  format: 'text';
  tag?: string;
  /** Stateless mode only. */
  urls?: string;
}

/** Builds the body: the message, then one `name: value` line per field (empty values as a dash). */
export function renderAppriseMessage(message: string, context: NotificationContext, options: { tag?: string; urls?: string }): AppriseMessage {
  const lines = (context.fields ?? []).map((field) => `${field.name}: ${field.value.trim() === '' ? '-' : field.value}`);
  const text = message.trim() === '' ? '-' : message;
  return {
    title: context.title ?? 'Holdfast notification',
    body: lines.length > 0 ? `${text}\n\n${lines.join('\n')}` : text,
    type: context.success === undefined ? 'info' : context.success ? 'success' : 'failure',
    // Plain text: Apprise converts it for each service, so job names are never read as Markdown or HTML.
    format: 'text',
    ...(options.tag ? { tag: options.tag } : {}),
    ...(options.urls ? { urls: options.urls } : {}),
  };
}
