import type { OrmDatabase } from '@holdfast/orm-port';
import type { AccessPolicy, AuthContext, ResourceRef } from '@holdfast/kernel';
import { UserEntity } from '../entities/user.js';
import type { GroupService, ScopedGrant } from '../groups/group-service.js';

/**
 * SPEC "Authentication" 7 with scoped grants. A super administrator passes everything; an unscoped permission
 * passes everything it names; a scoped grant passes only its listed resources, and passes routes that name no
 * resource (list routes then narrow results with {@link visibleIds}). API keys carry no scoped grants.
 */
export class GrantAccessPolicy implements AccessPolicy {
  constructor(
    private readonly database: OrmDatabase,
    private readonly groups: GroupService,
  ) {}

  async isAllowed(auth: AuthContext, permission: string, resource?: ResourceRef): Promise<boolean> {
    if (auth.isSuperAdmin || auth.permissions.includes(permission)) return true;
    if (auth.authMethod !== 'session') return false;
    const grants = await this.scopedGrants(auth.userId, permission);
    if (grants.length === 0) return false;
    if (!resource) return true;
    return grants.some((grant) => grant.resourceType === resource.type && grant.resourceIds.includes(resource.id));
  }

  async visibleIds(auth: AuthContext, permission: string, type: string): Promise<'all' | string[]> {
    if (auth.isSuperAdmin || auth.permissions.includes(permission)) return 'all';
    if (auth.authMethod !== 'session') return [];
    const grants = await this.scopedGrants(auth.userId, permission);
    return [...new Set(grants.filter((grant) => grant.resourceType === type).flatMap((grant) => grant.resourceIds))];
  }

  private async scopedGrants(userId: string, permission: string): Promise<ScopedGrant[]> {
    const em = this.database.em();
    const user = await em.findOne(UserEntity, { id: userId }, { fields: ['groupId'] });
    if (!user?.groupId) return [];
    const { grants } = await this.groups.accessOf(user.groupId);
    return grants.filter((grant) => grant.permission === permission);
  }
}
