import type { NotificationContext, NotificationField } from '@holdfast/sdk';

/** The product name the subject is prefixed with (SPEC: "[<service name>] <title>"). */
export const SUBJECT_PREFIX = '[Holdfast]';
const DEFAULT_TITLE = 'Holdfast notification';

/** One rendered email. */
export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

/** SPEC: empty field values are rendered as a dash. */
function shown(value: string | undefined | null): string {
  return value === undefined || value === null || value.trim() === '' ? '-' : value;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Keeps the colour only when it is a plain hex value, so it cannot inject markup or CSS. */
function safeColor(color: string | undefined, success: boolean | undefined): string {
  if (color && /^#[0-9a-fA-F]{3,8}$/.test(color)) return color;
  if (success === undefined) return '#3b82f6';
  return success ? '#16a34a' : '#dc2626';
}

/** A subject line cannot carry line breaks (header injection); they become spaces. */
function subjectOf(title: string): string {
  return `${SUBJECT_PREFIX} ${title.replace(/[\r\n]+/g, ' ').trim() || DEFAULT_TITLE}`;
}

function textOf(message: string, fields: NotificationField[]): string {
  const lines = [message.trim() === '' ? '-' : message];
  if (fields.length > 0) lines.push('', ...fields.map((field) => `${shown(field.name)}: ${shown(field.value)}`));
  lines.push('', '-- ', 'Sent by Holdfast');
  return `${lines.join('\n')}\n`;
}

function htmlOf(title: string, message: string, fields: NotificationField[], color: string): string {
  const rows = fields
    .map(
      (field) =>
        `<tr><th align="left" style="padding:4px 12px 4px 0;vertical-align:top">${escapeHtml(shown(field.name))}</th>` +
        `<td style="padding:4px 0;white-space:pre-wrap">${escapeHtml(shown(field.value))}</td></tr>`,
    )
    .join('');
  const table = rows ? `<table style="border-collapse:collapse;margin-top:12px">${rows}</table>` : '';
  return [
    '<!doctype html><html><body style="font-family:sans-serif;color:#111">',
    `<div style="border-left:6px solid ${color};padding:8px 16px">`,
    `<h2 style="margin:0 0 8px">${escapeHtml(title)}</h2>`,
    `<p style="margin:0;white-space:pre-wrap">${escapeHtml(message.trim() === '' ? '-' : message)}</p>`,
    table,
    '</div><p style="color:#666;font-size:12px">Sent by Holdfast</p></body></html>',
  ].join('');
}

/** Renders subject, text and HTML bodies of one notification. */
export function renderEmail(message: string, context: NotificationContext = {}): RenderedEmail {
  const title = context.title?.trim() || DEFAULT_TITLE;
  const fields = context.fields ?? [];
  return {
    subject: subjectOf(title),
    text: textOf(message, fields),
    html: htmlOf(title, message, fields, safeColor(context.color, context.success)),
  };
}
