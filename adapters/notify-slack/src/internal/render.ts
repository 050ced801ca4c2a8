import type { NotificationContext } from '@holdfast/sdk';

/** Block Kit limits (https://api.slack.com/reference/block-kit/blocks). */
export const BLOCK_LIMITS = { blocks: 50, headerText: 150, sectionText: 3000, sectionFields: 10, fieldText: 2000, fieldSections: 4 } as const;

type Text = { type: 'plain_text'; text: string; emoji: true } | { type: 'mrkdwn'; text: string };
/** The blocks this channel sends. */
export type SlackBlock =
  | { type: 'header'; text: Text }
  | { type: 'section'; text: Text }
  | { type: 'section'; fields: Text[] }
  | { type: 'context'; elements: Text[] };

/** The body of `POST {webhookUrl}` (Slack incoming webhook with Block Kit). */
export interface SlackPayload {
  text: string;
  blocks: SlackBlock[];
  username: string;
  channel?: string;
  icon_emoji?: string;
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Slack's mrkdwn treats only `&`, `<` and `>` as control characters; escape them so text cannot form links or mentions. */
export function escapeMrkdwn(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** Builds the payload: header, message section, field sections (10 per section), a context line; `text` is the fallback. */
export function renderSlackPayload(message: string, context: NotificationContext, options: { username: string; channel?: string; iconEmoji?: string }): SlackPayload {
  const title = context.title ?? 'Holdfast notification';
  const fields = (context.fields ?? []).slice(0, BLOCK_LIMITS.sectionFields * BLOCK_LIMITS.fieldSections).map(
    (field): Text => ({
      type: 'mrkdwn',
      text: cut(`*${escapeMrkdwn(field.name)}*\n${escapeMrkdwn(field.value.trim() === '' ? '-' : field.value)}`, BLOCK_LIMITS.fieldText),
    }),
  );
  const blocks: SlackBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: cut(title, BLOCK_LIMITS.headerText), emoji: true } },
    { type: 'section', text: { type: 'mrkdwn', text: cut(escapeMrkdwn(message.trim() === '' ? '-' : message), BLOCK_LIMITS.sectionText) } },
  ];
  for (let start = 0; start < fields.length; start += BLOCK_LIMITS.sectionFields) {
    blocks.push({ type: 'section', fields: fields.slice(start, start + BLOCK_LIMITS.sectionFields) });
  }
  const mark = context.success === undefined ? '' : context.success ? ':white_check_mark: ' : ':x: ';
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `${mark}Holdfast${context.eventType ? ` · ${escapeMrkdwn(context.eventType)}` : ''}` }] });
  return {
    // Shown in push notifications and clients without Block Kit.
    text: cut(`${title}: ${message}`, 3000),
    blocks,
    username: options.username,
    ...(options.channel ? { channel: options.channel } : {}),
    ...(options.iconEmoji ? { icon_emoji: options.iconEmoji } : {}),
  };
}
