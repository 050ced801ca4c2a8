import type { NotificationContext } from '@holdfast/sdk';

/** Discord's documented embed limits (https://discord.com/developers/docs/resources/message#embed-object-embed-limits). */
export const EMBED_LIMITS = { title: 256, description: 4096, fields: 25, fieldName: 256, fieldValue: 1024, footer: 2048, total: 6000 } as const;

/** One embed field. */
export interface EmbedField {
  name: string;
  value: string;
  inline: boolean;
}

/** The body of `POST {webhookUrl}` (Discord "Execute Webhook"). */
export interface DiscordPayload {
  username: string;
  avatar_url?: string;
  embeds: [{ title: string; description: string; color: number; fields: EmbedField[]; footer: { text: string }; timestamp: string }];
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `#rrggbb` or `#rgb` as the integer Discord wants; green / red / blue by outcome when absent or invalid. */
export function colorAsInteger(color: string | undefined, success: boolean | undefined): number {
  const hex = /^#?([0-9a-f]{6}|[0-9a-f]{3})$/i.exec(color?.trim() ?? '')?.[1];
  if (hex) return Number.parseInt(hex.length === 3 ? [...hex].map((digit) => digit + digit).join('') : hex, 16);
  if (success === undefined) return 0x3b82f6;
  return success ? 0x22c55e : 0xef4444;
}

/** Builds the payload: one embed; fields as embed fields within Discord's count, length and 6 000-character limits. */
export function renderDiscordPayload(
  message: string,
  context: NotificationContext,
  options: { username: string; avatarUrl?: string; now?: Date },
): DiscordPayload {
  const title = cut(context.title ?? 'Holdfast notification', EMBED_LIMITS.title);
  const footer = cut(context.eventType ? `Holdfast · ${context.eventType}` : 'Holdfast', EMBED_LIMITS.footer);
  const fields = (context.fields ?? []).slice(0, EMBED_LIMITS.fields).map((field) => ({
    name: cut(field.name.trim() === '' ? '-' : field.name, EMBED_LIMITS.fieldName),
    value: cut(field.value.trim() === '' ? '-' : field.value, EMBED_LIMITS.fieldValue),
    inline: field.inline ?? false,
  }));
  // The 6 000-character total covers title, description, field names and values and the footer: drop trailing
  // fields first, then shorten the description.
  const fieldChars = () => fields.reduce((sum, field) => sum + field.name.length + field.value.length, 0);
  while (fields.length > 0 && title.length + footer.length + fieldChars() > EMBED_LIMITS.total - 200) fields.pop();
  const room = Math.min(EMBED_LIMITS.description, EMBED_LIMITS.total - title.length - footer.length - fieldChars());
  const description = cut(message === '' ? '-' : message, room);
  return {
    username: options.username,
    ...(options.avatarUrl ? { avatar_url: options.avatarUrl } : {}),
    embeds: [
      {
        title,
        description,
        color: colorAsInteger(context.color, context.success),
        fields,
        footer: { text: footer },
        timestamp: (options.now ?? new Date()).toISOString(),
      },
    ],
  };
}
