import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** A permission group; `permissions` is a JSON string array of catalog permissions granted on every resource. */
export const GroupEntity = defineEntity({
  name: 'Group',
  tableName: 'groups',
  properties: {
    id: p.string().primary().length(36),
    name: p.string().unique('groups_name_unique'),
    permissions: p.text().default('[]'),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** A stored group row. */
export type Group = InferEntity<typeof GroupEntity>;

/**
 * A scoped grant: the group holds `permission` only on the listed resources of `resourceType`
 * (e.g. `jobs:execute` on two job ids). `resourceIds` is a JSON string array.
 */
export const GroupGrantEntity = defineEntity({
  name: 'GroupGrant',
  tableName: 'group_grants',
  properties: {
    id: p.string().primary().length(36),
    groupId: p.string().length(36).index('group_grants_group_id_index'),
    permission: p.string(),
    resourceType: p.string(),
    resourceIds: p.text().default('[]'),
    createdAt: p.datetime(),
  },
});

/** A stored scoped grant row. */
export type GroupGrant = InferEntity<typeof GroupGrantEntity>;
