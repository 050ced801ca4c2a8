import type { NotificationContext } from '@holdfast/sdk';

/** The Adaptive Card schema version Teams renders everywhere (SPEC: card version 1.4). */
export const CARD_VERSION = '1.4';
/** Teams refuses messages over about 28 KB; these caps keep a card well below that. */
const MAX_MESSAGE = 8_000;
const MAX_FACTS = 30;
const MAX_FACT_VALUE = 500;

type CardElement =
  | { type: 'TextBlock'; text: string; wrap: true; size?: 'Small' | 'Large'; weight?: 'Bolder'; color?: 'Good' | 'Attention' | 'Default'; isSubtle?: true; style?: 'heading' }
  | { type: 'FactSet'; facts: { title: string; value: string }[] };

/** The Adaptive Card itself. */
export interface AdaptiveCard {
  $schema: 'http://adaptivecards.io/schemas/adaptive-card.json';
  type: 'AdaptiveCard';
  version: typeof CARD_VERSION;
  body: CardElement[];
  msteams: { width: 'Full' };
}

/** The body of `POST {webhookUrl}`: the card wrapped as a Teams message, as the Workflows "post card" flow expects. */
export interface TeamsPayload {
  type: 'message';
  attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive'; contentUrl: null; content: AdaptiveCard }];
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Builds the card: a coloured heading, the message, the fields as a FactSet, and a subtle footer. */
export function renderTeamsPayload(message: string, context: NotificationContext): TeamsPayload {
  // Adaptive Cards only know named colours, so the outcome picks one; a hex `context.color` cannot be shown.
  const color = context.success === undefined ? 'Default' : context.success ? 'Good' : 'Attention';
  const facts = (context.fields ?? []).slice(0, MAX_FACTS).map((field) => ({
    title: field.name,
    value: cut(field.value.trim() === '' ? '-' : field.value, MAX_FACT_VALUE),
  }));
  const body: CardElement[] = [
    { type: 'TextBlock', text: context.title ?? 'Holdfast notification', wrap: true, size: 'Large', weight: 'Bolder', color, style: 'heading' },
    { type: 'TextBlock', text: cut(message.trim() === '' ? '-' : message, MAX_MESSAGE), wrap: true },
  ];
  if (facts.length > 0) body.push({ type: 'FactSet', facts });
  body.push({ type: 'TextBlock', text: context.eventType ? `Holdfast · ${context.eventType}` : 'Holdfast', wrap: true, size: 'Small', isSubtle: true });
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: CARD_VERSION, body, msteams: { width: 'Full' } },
      },
    ],
  };
}
