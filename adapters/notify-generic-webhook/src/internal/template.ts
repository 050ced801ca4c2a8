import type { NotificationField } from '@holdfast/sdk';

/** The placeholders a payload template may use. */
export const TEMPLATE_VARIABLES = ['title', 'message', 'success', 'color', 'timestamp', 'eventType', 'fields'] as const;

/** One of {@link TEMPLATE_VARIABLES}. */
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];

/** The values placeholders are replaced with. */
export interface TemplateValues {
  title: string;
  message: string;
  /** `null` when the event has no outcome (system events, tests without one). */
  success: boolean | null;
  color: string;
  timestamp: string;
  eventType: string;
  fields: NotificationField[];
}

/** A template that cannot produce a payload; the message names the problem, never the values. */
export class TemplateError extends Error {
  override readonly name = 'TemplateError';
}

const PLACEHOLDER = /^\{\{\s*([A-Za-z]+)\s*\}\}/;

/** Fields as JSON; empty values become a dash, as every channel renders them. */
function fieldsAsJson(fields: NotificationField[]) {
  return fields.map((field) => ({ name: field.name, value: field.value === '' ? '-' : field.value, inline: field.inline ?? false }));
}

/** A value written where a JSON value is expected: a JSON literal. */
function asJsonValue(name: TemplateVariable, values: TemplateValues): string {
  if (name === 'fields') return JSON.stringify(fieldsAsJson(values.fields));
  return JSON.stringify(values[name]);
}

/** A value written inside a JSON string: its text, escaped for the string. */
function asStringContent(name: TemplateVariable, values: TemplateValues): string {
  let text: string;
  if (name === 'fields') text = fieldsAsJson(values.fields).map((field) => `${field.name}: ${field.value}`).join('\n');
  else if (name === 'success') text = values.success === null ? '' : String(values.success);
  else text = values[name];
  return JSON.stringify(text).slice(1, -1);
}

/**
 * Renders a payload template so the result is always valid JSON: a placeholder inside a JSON string is replaced by
 * the escaped text of the value; elsewhere by a JSON value (strings quoted, `success` a boolean or null, `fields` an
 * array of `{ name, value, inline }`). Throws {@link TemplateError} for unknown placeholders or invalid JSON.
 */
export function renderTemplate(template: string, values: TemplateValues): string {
  let output = '';
  let inString = false;
  let index = 0;
  while (index < template.length) {
    const placeholder = template.startsWith('{{', index) ? PLACEHOLDER.exec(template.slice(index)) : null;
    if (placeholder) {
      const name = placeholder[1] as TemplateVariable;
      if (!TEMPLATE_VARIABLES.includes(name)) {
        throw new TemplateError(`unknown placeholder {{${name}}} (known: ${TEMPLATE_VARIABLES.join(', ')})`);
      }
      output += inString ? asStringContent(name, values) : asJsonValue(name, values);
      index += placeholder[0].length;
      continue;
    }
    const char = template[index] as string;
    if (inString && char === '\\') {
      // Copy an escape sequence whole so an escaped quote does not end the string.
      output += template.slice(index, index + 2);
      index += 2;
      continue;
    }
    if (char === '"') inString = !inString;
    output += char;
    index++;
  }
  try {
    JSON.parse(output);
  } catch (error) {
    // V8 quotes the offending text in its message; keep only the position so payload values stay out of logs.
    const position = /position (\d+)/.exec((error as Error).message)?.[1];
    throw new TemplateError(`the payload template does not render to valid JSON${position ? ` (near character ${position})` : ''}`);
  }
  return output;
}

/** The payload sent when no template is configured. */
export function defaultPayload(values: TemplateValues): string {
  return JSON.stringify({ ...values, fields: fieldsAsJson(values.fields) });
}

/** Sample values used to validate a template when the config is saved. */
export const SAMPLE_VALUES: TemplateValues = {
  title: 'Sample "title"',
  message: 'line one\nline two',
  success: true,
  color: '#22c55e',
  timestamp: '2026-01-01T00:00:00.000Z',
  eventType: 'backup_success',
  fields: [{ name: 'Job', value: 'nightly' }],
};
