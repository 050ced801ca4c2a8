import { z } from 'zod';
import { nameField, refId, timestamp } from '../shared/schemas.js';
import { ADAPTER_CONFIG_TYPES } from './adapter-types.js';

const configObject = z.record(z.string(), z.unknown()).describe("The adapter's settings; see GET /api/adapters/types");

const commonFields = {
  name: nameField,
  config: configObject,
  metadata: z.record(z.string(), z.unknown()).nullable().optional().describe('Non-sensitive runtime data'),
  primaryCredentialId: refId.nullable().optional(),
  sshCredentialId: refId.nullable().optional(),
  defaultRetentionPolicyId: refId.nullable().optional(),
  excludeFromRestore: z.boolean().optional().describe('Sources only: hide from the restore-target list'),
  agentId: refId.nullable().optional().describe('Sources only: the remote agent that runs this source (docs/agents.md); null runs it on the server'),
};

/** POST /api/adapters */
export const createAdapterBody = z.strictObject({
  type: z.enum(ADAPTER_CONFIG_TYPES),
  adapterId: z.string().min(1).max(255),
  ...commonFields,
});

/** PUT /api/adapters/:id: type and adapter cannot change; a secret sent empty or omitted keeps the stored one. */
export const updateAdapterBody = z.strictObject({
  type: z.enum(ADAPTER_CONFIG_TYPES).optional(),
  adapterId: z.string().min(1).max(255).optional(),
  name: nameField.optional(),
  config: configObject.optional(),
  metadata: commonFields.metadata,
  primaryCredentialId: commonFields.primaryCredentialId,
  sshCredentialId: commonFields.sshCredentialId,
  defaultRetentionPolicyId: commonFields.defaultRetentionPolicyId,
  excludeFromRestore: commonFields.excludeFromRestore,
  agentId: commonFields.agentId,
});

/** GET /api/adapters query. */
export const listAdaptersQuery = z.strictObject({ type: z.enum(ADAPTER_CONFIG_TYPES).optional() });

/** POST /api/adapters/test-connection: a saved id, or an unsaved config (secrets merged from `id` when given). */
export const testConnectionBody = z.strictObject({
  id: refId.optional(),
  type: z.enum(ADAPTER_CONFIG_TYPES).optional(),
  adapterId: z.string().min(1).max(255).optional(),
  config: configObject.optional(),
  primaryCredentialId: refId.nullable().optional(),
  sshCredentialId: refId.nullable().optional(),
  agentId: refId.nullable().optional().describe('Sources only: test through this agent (default: the saved one); null tests from the server'),
});

/** An adapter config as the API answers it: never a secret value. */
export const adapterConfigSchema = z.object({
  id: z.string(),
  name: z.string(),
  type: z.enum(ADAPTER_CONFIG_TYPES),
  adapterId: z.string(),
  config: z.record(z.string(), z.unknown()).describe('Settings without secret fields'),
  secretStatus: z.record(z.string(), z.boolean()).describe('Per secret field: whether a value is stored'),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  primaryCredentialId: z.string().nullable(),
  sshCredentialId: z.string().nullable(),
  defaultRetentionPolicyId: z.string().nullable(),
  excludeFromRestore: z.boolean(),
  agentId: z.string().nullable().describe('Sources only: the remote agent that runs this source; null: the server runs it'),
  lastHealthCheck: timestamp.nullable(),
  lastStatus: z.enum(['ONLINE', 'DEGRADED', 'OFFLINE']),
  lastError: z.string().nullable(),
  consecutiveFailures: z.number().int(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

/** Result of a connection test. */
export const testConnectionResult = z.object({
  success: z.boolean(),
  message: z.string(),
  latencyMs: z.number().optional(),
  version: z.string().optional(),
  edition: z.string().optional().describe('Sources: the engine edition, e.g. MariaDB or MySQL'),
});

/** One installed adapter with the JSON Schema of its config (for forms). */
export const adapterTypeSchema = z.object({
  type: z.enum(ADAPTER_CONFIG_TYPES),
  kind: z.string(),
  adapterId: z.string(),
  displayName: z.string(),
  description: z.string().nullable(),
  capabilities: z.record(z.string(), z.unknown()),
  requiredCredentials: z.array(z.string()),
  secretFields: z.array(z.string()),
  configSchema: z.record(z.string(), z.unknown()).describe('JSON Schema (draft 2020-12) of the config'),
});

export type CreateAdapterInput = z.output<typeof createAdapterBody>;
export type UpdateAdapterInput = z.output<typeof updateAdapterBody>;
export type TestConnectionInput = z.output<typeof testConnectionBody>;
export type AdapterConfigView = z.output<typeof adapterConfigSchema>;
