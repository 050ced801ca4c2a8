import { z } from 'zod';
import { descriptionField, nameField, timestamp } from '../shared/schemas.js';
import { CREDENTIAL_TYPES } from './credential-types.js';

/** POST /api/credentials: `data` is validated against the type's own payload schema by the service. */
export const createCredentialBody = z.strictObject({
  name: nameField,
  description: descriptionField,
  type: z.enum(CREDENTIAL_TYPES),
  data: z.record(z.string(), z.unknown()).describe('Payload of the type; see docs/api/catalog.md'),
});

/** PUT /api/credentials/:id: secret fields sent empty or omitted keep the stored value. */
export const updateCredentialBody = z.strictObject({
  name: nameField.optional(),
  description: descriptionField,
  type: z.enum(CREDENTIAL_TYPES).optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});

/** POST /api/credentials/ssh-key: creates an SSH_KEY profile with a freshly generated key pair. */
export const generateSshKeyBody = z.strictObject({
  name: nameField,
  description: descriptionField,
  username: z.string().min(1).max(1000).optional(),
  algorithm: z.enum(['ed25519', 'rsa', 'ecdsa']).default('ed25519').describe('rsa is 4096 bits, ecdsa is P-256'),
  passphrase: z.string().min(1).max(1000).optional(),
});

/** A credential profile as the API answers it: never a secret value. */
export const credentialSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  type: z.enum(CREDENTIAL_TYPES),
  data: z.record(z.string(), z.unknown()).describe('Non-secret fields of the payload'),
  secretStatus: z.record(z.string(), z.boolean()),
  createdAt: timestamp,
  updatedAt: timestamp,
});

/** POST /api/credentials/:id/reveal answer. */
export const revealedSchema = z.object({ id: z.string(), type: z.enum(CREDENTIAL_TYPES), data: z.record(z.string(), z.unknown()) });

/** GET /api/credentials/:id/usage answer. */
export const usageSchema = z.object({
  adapters: z.array(z.object({ id: z.string(), name: z.string(), type: z.string(), role: z.enum(['primary', 'ssh']) })),
  jobs: z.array(z.object({ id: z.string(), name: z.string() })),
});

export type CreateCredentialInput = z.output<typeof createCredentialBody>;
export type UpdateCredentialInput = z.output<typeof updateCredentialBody>;
export type GenerateSshKeyInput = z.output<typeof generateSshKeyBody>;
export type CredentialView = z.output<typeof credentialSchema>;
