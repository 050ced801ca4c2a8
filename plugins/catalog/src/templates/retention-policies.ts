import { NotFoundError, ValidationError, describeConfigIssues, type AdapterRegistry } from '@holdfast/kernel';
import { z } from 'zod';
import { RetentionPolicyEntity, type RetentionPolicyRow } from '../entities/templates.js';
import { iso, parseJsonColumn } from '../shared/deps.js';
import { jobsUsingRetentionPolicy } from '../shared/references.js';
import { descriptionField, nameField, timestamp } from '../shared/schemas.js';
import type { TemplateKind } from './template-store.js';

/** The retention strategy every policy config is validated with (registry kind `retention`, id `gfs`). */
export const RETENTION_STRATEGY_ID = 'gfs';

const policyConfig = z.record(z.string(), z.unknown()).describe("The gfs retention adapter's policy JSON");

export const createRetentionPolicyBody = z.strictObject({
  name: nameField,
  description: descriptionField,
  isDefault: z.boolean().optional(),
  config: policyConfig,
});

export const updateRetentionPolicyBody = z.strictObject({
  name: nameField.optional(),
  description: descriptionField,
  isDefault: z.boolean().optional(),
  config: policyConfig.optional(),
});

export const retentionPolicySchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  config: z.record(z.string(), z.unknown()),
  isDefault: z.boolean(),
  isSystem: z.boolean(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

/** Validates a policy with the retention adapter's own schema (negative, fractional, non-numeric tiers fail). */
export function validatePolicyConfig(registry: AdapterRegistry, config: unknown): Record<string, unknown> {
  const strategy = registry.get('retention', RETENTION_STRATEGY_ID);
  if (!strategy) throw new NotFoundError(`The retention adapter "${RETENTION_STRATEGY_ID}" is not installed`);
  const parsed = strategy.definition.configSchema.safeParse(config);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({
      path: ['body', 'config', ...issue.path.map(String)].join('.'),
      message: issue.message,
    }));
    throw new ValidationError(`Invalid request: config: ${describeConfigIssues(parsed.error)}`, issues);
  }
  return parsed.data as Record<string, unknown>;
}

/** Retention policies: the kind-specific part of the template rules. */
export function retentionPolicyKind(
  registry: () => AdapterRegistry,
): TemplateKind<RetentionPolicyRow, z.output<typeof retentionPolicySchema>, { config?: Record<string, unknown> }> {
  return {
    entity: RetentionPolicyEntity,
    label: 'A retention policy',
    resource: 'retention-policy',
    hasDefault: true,
    hasSystem: true,
    async prepare(fields) {
      if (fields.config === undefined) throw new ValidationError('Invalid request: body.config: required', [{ path: 'body.config', message: 'required' }]);
      return { config: JSON.stringify(validatePolicyConfig(registry(), fields.config)) };
    },
    view: (row) => ({
      id: row.id,
      name: row.name,
      description: row.description ?? null,
      config: parseJsonColumn<Record<string, unknown>>(row.config, {}),
      isDefault: row.isDefault,
      isSystem: row.isSystem,
      createdAt: iso(row.createdAt)!,
      updatedAt: iso(row.updatedAt)!,
    }),
    usedBy: (em, id) => jobsUsingRetentionPolicy(em, id),
  };
}
