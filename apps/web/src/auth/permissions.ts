/** What `GET /api/auth/session` says the caller may do: the one source of truth the screens follow. */
export interface Access {
  isSuperAdmin: boolean;
  permissions: readonly string[];
  grants: ReadonlyArray<{ permission: string; resourceType: string; resourceIds: readonly string[] }>;
}

/**
 * True when the caller holds `permission` anywhere: unscoped, or through a scoped grant on at least one record
 * (a page or menu entry is then useful: the API narrows what it lists).
 */
export function holds(access: Access | null | undefined, permission: string): boolean {
  if (!access) return false;
  if (access.isSuperAdmin || access.permissions.includes(permission)) return true;
  return access.grants.some((grant) => grant.permission === permission && grant.resourceIds.length > 0);
}

/** True when the caller holds `permission` on one record (`type` as the API's scoped grants name it: job, destination, ...). */
export function holdsOn(access: Access | null | undefined, permission: string, type: string, id: string): boolean {
  if (!access) return false;
  if (access.isSuperAdmin || access.permissions.includes(permission)) return true;
  return access.grants.some((grant) => grant.permission === permission && grant.resourceType === type && grant.resourceIds.includes(id));
}

/** The read permission each page needs (the API answers 403 without it); pages not listed need only a session. */
export const PAGE_PERMISSIONS: ReadonlyArray<{ path: string; permission: string }> = [
  { path: '/jobs/new', permission: 'jobs:write' },
  { path: '/jobs', permission: 'jobs:read' },
  { path: '/runs', permission: 'history:read' },
  { path: '/history', permission: 'history:read' },
  { path: '/storage', permission: 'storage:read' },
  { path: '/sources', permission: 'sources:read' },
  { path: '/destinations', permission: 'destinations:read' },
  { path: '/channels', permission: 'notifications:read' },
  { path: '/adapters/new/database', permission: 'sources:write' },
  { path: '/adapters/new/storage', permission: 'destinations:write' },
  { path: '/adapters/new/notification', permission: 'notifications:write' },
  { path: '/credentials', permission: 'credentials:read' },
  { path: '/encryption', permission: 'vault:read' },
  { path: '/retention-policies', permission: 'templates:read' },
  { path: '/naming-templates', permission: 'templates:read' },
  { path: '/schedule-presets', permission: 'templates:read' },
  { path: '/notification-templates', permission: 'notifications:read' },
  { path: '/notifications/log', permission: 'notifications:read' },
  { path: '/settings/notifications', permission: 'settings:read' },
  { path: '/settings/sso', permission: 'settings:read' },
  { path: '/settings', permission: 'settings:read' },
  { path: '/users', permission: 'users:read' },
  { path: '/groups', permission: 'groups:read' },
  { path: '/api-keys', permission: 'api-keys:read' },
  { path: '/agents', permission: 'agents:read' },
  { path: '/audit', permission: 'audit:read' },
];

/** The permission a path needs: the most specific entry that matches (`/settings/sso` before `/settings`). */
export function permissionForPath(pathname: string): string | undefined {
  if (pathname === '/') return 'dashboard:read';
  const matching = PAGE_PERMISSIONS.filter((entry) => pathname === entry.path || pathname.startsWith(`${entry.path}/`));
  return matching.sort((a, b) => b.path.length - a.path.length)[0]?.permission;
}
