
import type { OrmDatabase } from '@holdfast/orm-port';
import { ConflictError, NotFoundError, ValidationError } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/core';
import { GroupEntity, GroupGrantEntity, type Group } from '../entities/group.js';
import { UserEntity } from '../entities/user.js';
import { newId } from '../crypto/tokens.js';
import { SCOPABLE_RESOURCES, unknownPermissions } from '../permissions/catalog.js';

/** A permission limited to named resources of one type. */
export interface ScopedGrant {
  permission: string;
  resourceType: string;
  resourceIds: string[];
}

/** A group as the API shows it: unscoped permissions plus scoped grants. */
export interface GroupView {
  id: string;
  name: string;
  permissions: string[];
  grants: ScopedGrant[];
  createdAt: Date;
  updatedAt: Date;
}

/** Fields of a group on create and update. */
export interface GroupInput {
  name: string;
  permissions: string[];
  grants?: ScopedGrant[];
}

/** Groups and their scoped grants. */
export class GroupService {
  constructor(private readonly database: OrmDatabase) {}

  private em(): EntityManager {
    return this.database.em();
  }

  async list(): Promise<GroupView[]> {
    const em = this.em();
    const groups = await em.find(GroupEntity, {}, { orderBy: { name: 'asc' } });
    const grants = await em.find(GroupGrantEntity, { groupId: { $in: groups.map((g) => g.id) } }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    return groups.map((group) => toView(group, grants.filter((g) => g.groupId === group.id)));
  }

  /** The group; 404 `Group not found` otherwise. */
  async get(id: string): Promise<GroupView> {
    const em = this.em();
    const group = await em.findOne(GroupEntity, { id });
    if (!group) throw new NotFoundError('Group not found');
    return toView(group, await em.find(GroupGrantEntity, { groupId: id }, { orderBy: { createdAt: 'asc', id: 'asc' } }));
  }

  /** Unscoped permissions and scoped grants of a group (empty when the group is gone). */
  async accessOf(groupId: string): Promise<{ permissions: string[]; grants: ScopedGrant[] }> {
    const em = this.em();
    const group = await em.findOne(GroupEntity, { id: groupId });
    if (!group) return { permissions: [], grants: [] };
    const grants = await em.find(GroupGrantEntity, { groupId });
    return { permissions: parseList(group.permissions), grants: grants.map(toGrant) };
  }

  async create(input: GroupInput): Promise<GroupView> {
    validateInput(input);
    return this.em().transactional(async (em) => {
      if (await em.count(GroupEntity, { name: input.name })) throw new ConflictError('A group with this name already exists');
      const now = new Date();
      const group = em.create(GroupEntity, {
        id: newId(),
        name: input.name,
        permissions: JSON.stringify(dedupe(input.permissions)),
        createdAt: now,
        updatedAt: now,
      });
      this.replaceGrants(em, group.id, input.grants ?? []);
      await em.flush();
      return this.viewIn(em, group);
    });
  }

  async update(id: string, input: GroupInput): Promise<GroupView> {
    validateInput(input);
    return this.em().transactional(async (em) => {
      const group = await em.findOne(GroupEntity, { id });
      if (!group) throw new NotFoundError('Group not found');
      if (input.name !== group.name && (await em.count(GroupEntity, { name: input.name }))) {
        throw new ConflictError('A group with this name already exists');
      }
      group.name = input.name;
      group.permissions = JSON.stringify(dedupe(input.permissions));
      group.updatedAt = new Date();
      if (input.grants) {
        await em.nativeDelete(GroupGrantEntity, { groupId: id });
        this.replaceGrants(em, id, input.grants);
      }
      await em.flush();
      return this.viewIn(em, group);
    });
  }

  /** Deletes a group that no user belongs to (409 naming the member count otherwise). */
  async delete(id: string): Promise<GroupView> {
    return this.em().transactional(async (em) => {
      const group = await em.findOne(GroupEntity, { id });
      if (!group) throw new NotFoundError('Group not found');
      const members = await em.count(UserEntity, { groupId: id });
      if (members > 0) throw new ConflictError(`Group still has ${members} member(s); move them to another group first`);
      const view = await this.viewIn(em, group);
      await em.nativeDelete(GroupGrantEntity, { groupId: id });
      await em.nativeDelete(GroupEntity, { id });
      return view;
    });
  }

  private replaceGrants(em: EntityManager, groupId: string, grants: ScopedGrant[]): void {
    for (const grant of grants) {
      em.create(GroupGrantEntity, {
        id: newId(),
        groupId,
        permission: grant.permission,
        resourceType: grant.resourceType,
        resourceIds: JSON.stringify(dedupe(grant.resourceIds)),
        createdAt: new Date(),
      });
    }
  }

  private async viewIn(em: EntityManager, group: Group): Promise<GroupView> {
    return toView(group, await em.find(GroupGrantEntity, { groupId: group.id }, { orderBy: { createdAt: 'asc', id: 'asc' } }));
  }
}

function validateInput(input: GroupInput): void {
  const issues: { path: string; message: string }[] = [];
  for (const name of unknownPermissions(input.permissions)) issues.push({ path: 'permissions', message: `unknown permission "${name}"` });
  (input.grants ?? []).forEach((grant, index) => {
    const scopable = SCOPABLE_RESOURCES[grant.resourceType];
    if (!scopable) issues.push({ path: `grants.${index}.resourceType`, message: `unknown resource type "${grant.resourceType}"` });
    else if (!scopable.includes(grant.permission)) {
      issues.push({ path: `grants.${index}.permission`, message: `"${grant.permission}" cannot be scoped to ${grant.resourceType}` });
    }
  });
  if (issues.length > 0) throw new ValidationError(`Invalid group: ${issues.map((i) => i.message).join('; ')}`, issues);
}

function toView(group: Group, grants: { permission: string; resourceType: string; resourceIds: string }[]): GroupView {
  return {
    id: group.id,
    name: group.name,
    permissions: parseList(group.permissions),
    grants: grants.map(toGrant),
    createdAt: group.createdAt,
    updatedAt: group.updatedAt,
  };
}

function toGrant(row: { permission: string; resourceType: string; resourceIds: string }): ScopedGrant {
  return { permission: row.permission, resourceType: row.resourceType, resourceIds: parseList(row.resourceIds) };
}

/** Parses a JSON string array column; anything else reads as empty. */
export function parseList(json: string | null | undefined): string[] {
  try {
    const value: unknown = JSON.parse(json ?? '[]');
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

function dedupe(values: readonly string[]): string[] {
  return [...new Set(values)];
}
