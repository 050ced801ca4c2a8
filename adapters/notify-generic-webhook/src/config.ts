import { secret, secretTarget, z } from '@holdfast/sdk';
import { parseCustomHeaders } from './internal/headers.js';
import { renderTemplate, SAMPLE_VALUES, TemplateError } from './internal/template.js';

/** Config of the generic webhook channel (SPEC "Notification channel configurations"). */
export const webhookConfig = z.object({
  webhookUrl: secretTarget(
    z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).describe('URL the notification is sent to (http or https).'),
  ),
  method: z.enum(['POST', 'PUT', 'PATCH']).default('POST').describe('HTTP method of the request.'),
  contentType: z
    .string()
    .trim()
    .min(1)
    .default('application/json')
    .describe('Content-Type header of the request body.'),
  authHeader: secret(z.string().min(1))
    .optional()
    .describe('Value of the Authorization header, e.g. "Bearer <token>". Stored encrypted.'),
  // Secret: custom headers often carry API keys or tokens, so they are stored encrypted and never shown.
  customHeaders: secret(
    z
      .string()
      .optional()
      .superRefine((text, ctx) => {
        const parsed = parseCustomHeaders(text);
        if (!parsed.ok) for (const problem of parsed.problems) ctx.addIssue({ code: 'custom', message: problem });
      })
      .describe('Extra request headers, one "Key: Value" per line. Stored encrypted (they often carry tokens).'),
  ),
  payloadTemplate: z
    .string()
    .optional()
    .superRefine((template, ctx) => {
      if (template === undefined || template.trim() === '') return;
      try {
        renderTemplate(template, SAMPLE_VALUES);
      } catch (error) {
        if (!(error instanceof TemplateError)) throw error;
        ctx.addIssue({ code: 'custom', message: error.message });
      }
    })
    .describe(
      'JSON body with {{placeholders}}: title, message, success, color, timestamp, eventType, fields. Empty: a default JSON body.',
    ),
  timeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(25)
    .default(15)
    .describe('Seconds to wait for the webhook to answer (connection tests wait at most 8).'),
});

/** Parsed config of {@link webhookConfig}. */
export type WebhookConfig = z.output<typeof webhookConfig>;
