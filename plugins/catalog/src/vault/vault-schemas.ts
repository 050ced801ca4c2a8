import { z } from 'zod';
import { descriptionField, nameField, timestamp } from '../shared/schemas.js';

/**
 * POST /api/vault: omit `key` to generate one; send 64 hex characters or base64 of 32 bytes to import one; send
 * `publicKey` instead for a public-key profile.
 */
export const createVaultBody = z.strictObject({
  name: nameField,
  description: descriptionField,
  key: z.string().min(1).max(200).optional().describe('Import: 32-byte key as 64 hex characters or base64'),
  publicKey: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('A public-key profile (issue 45): an age X25519 recipient (`age1...`, as `age-keygen` prints it). The server keeps only this public key; backups are written in the age format and need the private key to be read'),
}).refine((body) => !(body.key && body.publicKey), { message: 'give either key (a symmetric profile) or publicKey (a public-key profile), not both', path: ['publicKey'] });

/** PUT /api/vault/:id: the key itself never changes (backups depend on it). */
export const updateVaultBody = z.strictObject({ name: nameField.optional(), description: descriptionField });

/** An encryption profile as the API answers it: never the key. */
export const vaultProfileSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  kind: z.enum(['symmetric', 'public-key']).describe('symmetric: Holdfast holds the key; public-key: Holdfast holds only an age recipient and cannot read the backups'),
  publicKey: z.string().nullable().describe('The age recipient (`age1...`) of a public-key profile; null for symmetric profiles'),
  keyFingerprint: z.string().describe('32 hex: the first 16 bytes of HMAC-SHA256(key, "holdfast key fingerprint"), as in encrypted backups and their sidecars (public-key profiles: of the 32-byte public key)'),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export type CreateVaultInput = z.output<typeof createVaultBody>;
export type UpdateVaultInput = z.output<typeof updateVaultBody>;
export type VaultProfileView = z.output<typeof vaultProfileSchema>;
