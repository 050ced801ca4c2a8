import { secret, secretFieldsOf } from '@holdfast/kernel';
import { z } from 'zod';

/** Credential profile types (SPEC "CredentialProfile"). */
export const CREDENTIAL_TYPES = ['USERNAME_PASSWORD', 'SSH_KEY', 'ACCESS_KEY', 'TOKEN', 'SMTP', 'WEBHOOK', 'OAUTH'] as const;

/** One of {@link CREDENTIAL_TYPES}. */
export type CredentialType = (typeof CREDENTIAL_TYPES)[number];

const text = (max = 1000) => z.string().min(1).max(max);
const secretText = (max = 20_000) => secret(z.string().min(1).max(max));

/** The payload schema of each credential type; secret fields carry `.meta({ secret: true })`. */
export const CREDENTIAL_PAYLOADS = {
  USERNAME_PASSWORD: z.strictObject({ username: text(), password: secretText() }),
  SSH_KEY: z.strictObject({
    username: text().optional(),
    privateKey: secretText(),
    passphrase: secretText(1000).optional(),
    publicKey: z.string().max(20_000).optional().describe('OpenSSH public key line'),
    algorithm: z.enum(['ed25519', 'rsa', 'ecdsa']).optional(),
  }),
  ACCESS_KEY: z.strictObject({
    accessKeyId: text(),
    secretAccessKey: secretText(),
    sessionToken: secretText().optional(),
    region: z.string().max(100).optional(),
  }),
  TOKEN: z.strictObject({ token: secretText() }),
  SMTP: z.strictObject({ username: text(), password: secretText() }),
  WEBHOOK: z.strictObject({
    url: z.url().max(4000).optional().describe('Webhook URL when it is itself the secret'),
    secretUrl: secretText(4000).optional().describe('A webhook URL that embeds its token; stored encrypted'),
    signingSecret: secretText().optional(),
    authHeader: secretText().optional().describe('Value of an Authorization header'),
  }),
  OAUTH: z.strictObject({
    clientId: text(),
    clientSecret: secretText(),
    refreshToken: secretText().optional(),
    accessToken: secretText().optional(),
    tokenExpiresAt: z.string().max(64).optional(),
    scope: z.string().max(2000).optional(),
  }),
} as const satisfies Record<CredentialType, z.ZodType>;

/** Secret field names of a credential type. */
export function credentialSecretFields(type: CredentialType): string[] {
  return secretFieldsOf(CREDENTIAL_PAYLOADS[type]);
}
