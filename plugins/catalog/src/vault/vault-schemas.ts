import { z } from 'zod';
import { descriptionField, nameField, timestamp } from '../shared/schemas.js';

/** POST /api/vault: omit `key` to generate one; send 64 hex characters or base64 of 32 bytes to import one. */
export const createVaultBody = z.strictObject({
  name: nameField,
  description: descriptionField,
  key: z.string().min(1).max(200).optional().describe('Import: 32-byte key as 64 hex characters or base64'),
});

/** PUT /api/vault/:id: the key itself never changes (backups depend on it). */
export const updateVaultBody = z.strictObject({ name: nameField.optional(), description: descriptionField });

/** An encryption profile as the API answers it: never the key. */
export const vaultProfileSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  keyFingerprint: z.string().describe('32 hex: the first 16 bytes of HMAC-SHA256(key, "holdfast key fingerprint"), as in encrypted backups and their sidecars'),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export type CreateVaultInput = z.output<typeof createVaultBody>;
export type UpdateVaultInput = z.output<typeof updateVaultBody>;
export type VaultProfileView = z.output<typeof vaultProfileSchema>;
