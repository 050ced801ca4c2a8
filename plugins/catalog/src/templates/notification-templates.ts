import { NotFoundError, ValidationError } from '@holdfast/kernel';
import { z } from 'zod';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import { NotificationTemplateEntity, type NotificationTemplateRow } from '../entities/templates.js';
import { iso, parseJsonColumn } from '../shared/deps.js';
import { jobsWhere } from '../shared/references.js';
import { descriptionField, nameField, refId, timestamp } from '../shared/schemas.js';
import type { TemplateKind } from './template-store.js';

/** Which job outcomes one channel receives. */
export const bindingSchema = z.strictObject({
  channelId: refId.describe('Adapter configuration of type notification'),
  onSuccess: z.boolean(),
  onPartial: z.boolean(),
  onFailed: z.boolean(),
});

const bindings = z.array(bindingSchema).max(100);

export const createNotificationTemplateBody = z.strictObject({
  name: nameField,
  description: descriptionField,
  isDefault: z.boolean().optional(),
  bindings,
});

export const updateNotificationTemplateBody = z.strictObject({
  name: nameField.optional(),
  description: descriptionField,
  isDefault: z.boolean().optional(),
  bindings: bindings.optional(),
});

export const notificationTemplateSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  isDefault: z.boolean(),
  bindings: z.array(bindingSchema),
  createdAt: timestamp,
  updatedAt: timestamp,
});

type Binding = z.output<typeof bindingSchema>;

/** Notification templates: bindings must name distinct, existing notification channels. */
export function notificationTemplateKind(): TemplateKind<
  NotificationTemplateRow,
  z.output<typeof notificationTemplateSchema>,
  { bindings?: Binding[] }
> {
  return {
    entity: NotificationTemplateEntity,
    label: 'A notification template',
    resource: 'notification-template',
    hasDefault: true,
    hasSystem: false,
    async prepare(fields, em) {
      const list = fields.bindings ?? [];
      const seen = new Set<string>();
      for (const [index, binding] of list.entries()) {
        if (seen.has(binding.channelId)) {
          const path = `body.bindings[${index}].channelId`;
          throw new ValidationError(`Invalid request: ${path}: channel bound twice`, [{ path, message: 'channel bound twice' }]);
        }
        seen.add(binding.channelId);
        const channel = await em.findOne(AdapterConfigEntity, { id: binding.channelId, type: 'notification' });
        if (!channel) throw new NotFoundError(`Notification channel ${binding.channelId} not found`);
      }
      return { bindings: JSON.stringify(list) };
    },
    view: (row) => ({
      id: row.id,
      name: row.name,
      description: row.description ?? null,
      isDefault: row.isDefault,
      bindings: parseJsonColumn<Binding[]>(row.bindings, []),
      createdAt: iso(row.createdAt)!,
      updatedAt: iso(row.updatedAt)!,
    }),
    usedBy: (em, id) => jobsWhere(em, 'notificationTemplateId', id),
  };
}
