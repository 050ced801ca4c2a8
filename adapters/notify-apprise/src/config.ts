import { secret, z } from '@holdfast/sdk';

/** Config of the Apprise channel (beyond SPEC; issue 14): a stateful config key or stateless Apprise URLs. */
export const appriseConfig = z
  .object({
    serverUrl: z
      .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
      .describe('Base URL of the Apprise API server, e.g. http://apprise:8000 (a path prefix behind a proxy is kept).'),
    key: secret(z.string().trim().regex(/^[\w-]{1,128}$/, 'must be 1 to 128 letters, digits, "-" or "_" (an Apprise config key)'))
      .optional()
      .describe('Key of a configuration saved on the server: notifications go to POST /notify/{key}. Stored encrypted.'),
    urls: secret(z.string().trim().min(1).max(10_000))
      .optional()
      .describe('Stateless mode: Apprise URLs (e.g. tgram://…, mailto://…) separated by commas, spaces or lines, sent to POST /notify/. Stored encrypted.'),
    tag: z
      .string()
      .trim()
      .regex(/^[\w\-, ]{1,200}$/, 'must be tag names: "," means OR, a space means AND')
      .optional()
      .describe('Notify only services with these tags ("a, b" = a OR b, "a b" = a AND b).'),
  })
  .superRefine((config, ctx) => {
    // Exactly one mode: a saved configuration, or URLs sent with each message.
    if ((config.key === undefined) === (config.urls === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['key'], message: 'set either key (stateful) or urls (stateless), not both and not neither' });
    }
  });

/** Parsed config of {@link appriseConfig}. */
export type AppriseConfig = z.output<typeof appriseConfig>;
