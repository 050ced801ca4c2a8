import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** One audit entry (SPEC "Other records": AuditLog). `details` is a JSON string. */
export const AuditLogEntity = defineEntity({
  name: 'AuditLog',
  tableName: 'audit_logs',
  indexes: [
    { properties: ['createdAt'], name: 'audit_logs_created_at_index' },
    { properties: ['userId', 'createdAt'], name: 'audit_logs_user_id_created_at_index' },
    { properties: ['action', 'createdAt'], name: 'audit_logs_action_created_at_index' },
    { properties: ['resource', 'createdAt'], name: 'audit_logs_resource_created_at_index' },
  ],
  properties: {
    id: p.string().primary().length(36),
    userId: p.string().length(36).nullable(),
    /** Display name of the actor when the entry was written: user name, API key name, or the email tried on a failed sign-in. */
    actorName: p.string().nullable(),
    action: p.string(),
    resource: p.string(),
    resourceId: p.string().nullable(),
    /** Name of the resource when the entry was written (user email, key name, group name...), where known. */
    resourceName: p.string().nullable(),
    details: p.text().nullable(),
    ipAddress: p.string().nullable(),
    userAgent: p.text().nullable(),
    createdAt: p.datetime(),
  },
});

/** A stored audit entry. */
export type AuditLog = InferEntity<typeof AuditLogEntity>;
