import { NotFoundError, ValidationError, instantiateAdapter, type AdapterRegistry, type NamingStrategy } from '@holdfast/kernel';
import type { DependencyContainer } from 'tsyringe';
import { z } from 'zod';
import { NamingTemplateEntity, type NamingTemplateRow } from '../entities/templates.js';
import { iso } from '../shared/deps.js';
import { jobsWhere } from '../shared/references.js';
import { descriptionField, nameField, timestamp } from '../shared/schemas.js';
import type { TemplateKind } from './template-store.js';

/** The naming strategy patterns are checked with (registry kind `naming`, id `template`). */
export const NAMING_STRATEGY_ID = 'template';

/** The pattern of the seeded system default template. */
export const DEFAULT_NAMING_PATTERN = '{job_name}_yyyy-MM-dd_HH-mm-ss';

const pattern = z.string().min(1).max(500).describe('Tokens such as {job_name}, {db_name}, {chain} and date tokens');

export const createNamingTemplateBody = z.strictObject({
  name: nameField,
  description: descriptionField,
  isDefault: z.boolean().optional(),
  pattern,
});

export const updateNamingTemplateBody = z.strictObject({
  name: nameField.optional(),
  description: descriptionField,
  isDefault: z.boolean().optional(),
  pattern: pattern.optional(),
});

export const namingTemplateSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  pattern: z.string(),
  isDefault: z.boolean(),
  isSystem: z.boolean(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

/** Checks a pattern with the naming adapter's own `validate()`. */
export function validatePattern(container: DependencyContainer, registry: AdapterRegistry, value: string): void {
  const strategy = registry.get('naming', NAMING_STRATEGY_ID);
  if (!strategy) throw new NotFoundError(`The naming adapter "${NAMING_STRATEGY_ID}" is not installed`);
  const naming = instantiateAdapter(container, strategy.definition, {}) as NamingStrategy;
  const verdict = naming.validate(value);
  if (!verdict.ok) {
    throw new ValidationError(`Invalid request: body.pattern: ${verdict.message}`, [{ path: 'body.pattern', message: verdict.message }]);
  }
}

/** Naming templates: the kind-specific part of the template rules. */
export function namingTemplateKind(
  container: DependencyContainer,
  registry: () => AdapterRegistry,
): TemplateKind<NamingTemplateRow, z.output<typeof namingTemplateSchema>, { pattern?: string }> {
  return {
    entity: NamingTemplateEntity,
    label: 'A naming template',
    resource: 'naming-template',
    hasDefault: true,
    hasSystem: true,
    async prepare(fields) {
      if (fields.pattern === undefined) throw new ValidationError('Invalid request: body.pattern: required', [{ path: 'body.pattern', message: 'required' }]);
      validatePattern(container, registry(), fields.pattern);
      return { pattern: fields.pattern };
    },
    view: (row) => ({
      id: row.id,
      name: row.name,
      description: row.description ?? null,
      pattern: row.pattern,
      isDefault: row.isDefault,
      isSystem: row.isSystem,
      createdAt: iso(row.createdAt)!,
      updatedAt: iso(row.updatedAt)!,
    }),
    usedBy: (em, id) => jobsWhere(em, 'namingTemplateId', id),
  };
}
