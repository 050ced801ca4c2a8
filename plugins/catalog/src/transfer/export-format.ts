import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { ValidationError } from '@holdfast/kernel';
import { z } from 'zod';

/** Format tag and version of an export document. */
export const EXPORT_FORMAT = 'holdfast-catalog-export';
export const EXPORT_VERSION = 1;
const HKDF_INFO = 'holdfast-catalog-export-v1';

const record = z.record(z.string(), z.unknown());
const list = z.array(record).max(100_000);

/** The export document (docs/api/catalog.md describes every part). */
export const exportDocumentSchema = z.object({
  format: z.literal(EXPORT_FORMAT),
  version: z.literal(EXPORT_VERSION),
  exportedAt: z.string(),
  secrets: z.enum(['omitted', 'encrypted']).describe('omitted: no secret values; encrypted: in `sealedSecrets`'),
  encryption: z
    .object({
      profileId: z.string(),
      profileName: z.string(),
      keyFingerprint: z.string(),
      algorithm: z.literal('AES-256-GCM'),
      kdf: z.literal('HKDF-SHA256'),
      salt: z.string(),
      iv: z.string(),
    })
    .nullable(),
  records: z.object({
    adapters: list,
    credentials: list,
    encryptionProfiles: list,
    retentionPolicies: list,
    namingTemplates: list,
    schedulePresets: list,
    notificationTemplates: list,
    jobs: list,
    settings: record,
    systemTasks: list,
  }),
  sealedSecrets: z.string().nullable(),
});

/** A parsed export document. */
export type ExportDocument = z.output<typeof exportDocumentSchema>;

/** The secret values an encrypted export carries, by record id. */
export interface ExportSecrets {
  adapters: Record<string, Record<string, unknown>>;
  credentials: Record<string, Record<string, unknown>>;
  encryptionProfiles: Record<string, string>;
}

function deriveKey(profileKey: Buffer, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', profileKey, salt, HKDF_INFO, 32));
}

/** Seals the secrets with a key derived (HKDF-SHA256, random salt) from the profile key; AES-256-GCM. */
export function sealExportSecrets(profileKey: Buffer, secrets: ExportSecrets): { salt: string; iv: string; sealed: string } {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(profileKey, salt), iv);
  cipher.setAAD(Buffer.from(EXPORT_FORMAT));
  const body = Buffer.concat([cipher.update(JSON.stringify(secrets), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return { salt: salt.toString('base64'), iv: iv.toString('base64'), sealed: body.toString('base64') };
}

/** Opens the secrets of an encrypted export; a wrong key is a 400 that says so. */
export function openExportSecrets(profileKey: Buffer, document: ExportDocument): ExportSecrets {
  if (!document.encryption || !document.sealedSecrets) throw new ValidationError('The export carries no secrets');
  const body = Buffer.from(document.sealedSecrets, 'base64');
  try {
    const decipher = createDecipheriv(
      'aes-256-gcm',
      deriveKey(profileKey, Buffer.from(document.encryption.salt, 'base64')),
      Buffer.from(document.encryption.iv, 'base64'),
    );
    decipher.setAAD(Buffer.from(EXPORT_FORMAT));
    decipher.setAuthTag(body.subarray(body.length - 16));
    const plain = Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
    return JSON.parse(plain) as ExportSecrets;
  } catch {
    throw new ValidationError(
      `The key does not open this export: it was encrypted with encryption profile "${document.encryption.profileName}" (key fingerprint ${document.encryption.keyFingerprint})`,
    );
  }
}

/** Reads a key given as hex/base64, or a recovery-kit key file (comment lines start with `#`). */
export function parseImportKey(text: string): Buffer {
  const body = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .join('');
  if (/^[0-9a-fA-F]{64}$/.test(body)) return Buffer.from(body, 'hex');
  const decoded = Buffer.from(body, 'base64');
  if (decoded.length === 32) return decoded;
  throw new ValidationError('Invalid request: key: must be a 32-byte key as 64 hex characters or base64', [
    { path: 'body.key', message: 'must be a 32-byte key as 64 hex characters or base64' },
  ]);
}
