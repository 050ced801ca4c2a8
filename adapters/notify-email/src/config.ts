import { secret, z } from '@holdfast/sdk';

/** Config of the email channel (SPEC "Notification channel configurations", kind `email`). */
export const emailConfig = z.object({
  host: z.string().trim().min(1).describe('SMTP server host name or address.'),
  port: z.number().int().min(1).max(65_535).default(587).describe('SMTP server port.'),
  secure: z
    .enum(['none', 'ssl', 'starttls'])
    .default('starttls')
    .describe('none: plain SMTP; ssl: TLS from the first byte (usually port 465); starttls: upgrade required (usually 587).'),
  user: z.string().min(1).optional().describe('SMTP user name; leave empty for servers without authentication.'),
  password: secret(z.string().min(1)).optional().describe('SMTP password. Stored encrypted.'),
  from: z.string().trim().min(1).describe('Sender, e.g. "Holdfast <backup@example.com>".'),
  to: z.email({ message: 'must be a valid email address' }).describe('Recipient address.'),
  tlsCaCertificate: z
    .string()
    .includes('-----BEGIN CERTIFICATE-----', { message: 'must be a PEM certificate' })
    .optional()
    .describe('PEM certificate of a private CA that signed the server certificate (self-hosted mail servers).'),
  timeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(25)
    .default(20)
    .describe('Seconds to wait for the server at each step (connection tests wait at most 8).'),
});

/** Parsed config of {@link emailConfig}. */
export type EmailConfig = z.output<typeof emailConfig>;
