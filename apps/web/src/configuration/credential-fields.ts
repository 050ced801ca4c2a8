/** The payload fields of each credential profile type (docs/api/catalog.md, "Payloads by type"). */
export type CredentialType = 'USERNAME_PASSWORD' | 'SSH_KEY' | 'ACCESS_KEY' | 'TOKEN' | 'SMTP' | 'WEBHOOK' | 'OAUTH';

export interface CredentialField {
  name: string;
  label: string;
  /** Never sent back by the API: shown as "stored" and kept when left empty on edit. */
  secret?: boolean;
  required?: boolean;
  multiline?: boolean;
}

export const CREDENTIAL_TYPES: Array<{ value: CredentialType; label: string }> = [
  { value: 'USERNAME_PASSWORD', label: 'Username and password' },
  { value: 'SSH_KEY', label: 'SSH key' },
  { value: 'ACCESS_KEY', label: 'Access key (S3 style)' },
  { value: 'TOKEN', label: 'Token' },
  { value: 'SMTP', label: 'SMTP login' },
  { value: 'WEBHOOK', label: 'Webhook' },
  { value: 'OAUTH', label: 'OAuth client' },
];

export const CREDENTIAL_FIELDS: Record<CredentialType, CredentialField[]> = {
  USERNAME_PASSWORD: [
    { name: 'username', label: 'Username', required: true },
    { name: 'password', label: 'Password', secret: true, required: true },
  ],
  SSH_KEY: [
    { name: 'username', label: 'Username' },
    { name: 'privateKey', label: 'Private key (PEM)', secret: true, required: true, multiline: true },
    { name: 'passphrase', label: 'Passphrase', secret: true },
    { name: 'publicKey', label: 'Public key (OpenSSH line)', multiline: true },
  ],
  ACCESS_KEY: [
    { name: 'accessKeyId', label: 'Access key id', required: true },
    { name: 'secretAccessKey', label: 'Secret access key', secret: true, required: true },
    { name: 'sessionToken', label: 'Session token', secret: true },
    { name: 'region', label: 'Region' },
  ],
  TOKEN: [{ name: 'token', label: 'Token', secret: true, required: true }],
  SMTP: [
    { name: 'username', label: 'Username', required: true },
    { name: 'password', label: 'Password', secret: true, required: true },
  ],
  WEBHOOK: [
    { name: 'url', label: 'URL' },
    { name: 'secretUrl', label: 'Secret URL', secret: true },
    { name: 'signingSecret', label: 'Signing secret', secret: true },
    { name: 'authHeader', label: 'Authorization header', secret: true },
  ],
  OAUTH: [
    { name: 'clientId', label: 'Client id', required: true },
    { name: 'clientSecret', label: 'Client secret', secret: true, required: true },
    { name: 'refreshToken', label: 'Refresh token', secret: true },
    { name: 'accessToken', label: 'Access token', secret: true },
    { name: 'tokenExpiresAt', label: 'Token expires at (ISO 8601)' },
    { name: 'scope', label: 'Scope' },
  ],
};

/**
 * The `data` to send: typed values only. An empty secret is left out so the server keeps the stored one; on create
 * a required field left empty (secret or not) is an error, on edit only a required non-secret one.
 */
export function credentialPayload(
  type: CredentialType,
  values: Record<string, string>,
  stored: Record<string, boolean> | null,
): { data: Record<string, string>; errors: Record<string, string> } {
  const data: Record<string, string> = {};
  const errors: Record<string, string> = {};
  for (const field of CREDENTIAL_FIELDS[type]) {
    const value = (values[field.name] ?? '').trim() === '' ? '' : (values[field.name] ?? '');
    if (value) data[field.name] = value;
    else if (field.required && !(field.secret && stored?.[field.name])) errors[field.name] = `Enter the ${field.label.toLowerCase()}`;
  }
  return { data, errors };
}
