/**
 * The one permission catalog: every route of the product names one of these. Names are `<area>:<verb>`.
 * Super administrator sessions hold all of them; API keys and groups may only carry names from this list.
 */
export const PERMISSION_CATALOG = [
  { name: 'jobs:read', description: 'List and view backup jobs' },
  { name: 'jobs:write', description: 'Create, update and delete backup jobs' },
  { name: 'jobs:execute', description: 'Trigger a job run, cancel a running execution' },
  { name: 'history:read', description: 'View executions, their logs and the run history' },
  { name: 'dashboard:read', description: 'View dashboard statistics and the calendar' },
  { name: 'sources:read', description: 'List and view source adapter configurations' },
  { name: 'sources:write', description: 'Create, update, delete and test source adapter configurations' },
  { name: 'destinations:read', description: 'List and view storage destination configurations' },
  { name: 'destinations:write', description: 'Create, update, delete and test storage destinations' },
  { name: 'notifications:read', description: 'View notification channels, templates and the notification log' },
  { name: 'notifications:write', description: 'Manage notification channels, templates and system notification settings' },
  { name: 'storage:read', description: 'Browse files stored in destinations' },
  { name: 'storage:download', description: 'Create download URLs for backup files' },
  { name: 'storage:restore', description: 'Restore a backup into a source' },
  { name: 'storage:delete', description: 'Delete, lock and unlock backup files' },
  { name: 'credentials:read', description: 'List credential profiles (never their secrets); validate cloud-drive tokens' },
  { name: 'credentials:write', description: 'Create, update and delete credential profiles' },
  { name: 'credentials:reveal', description: 'Reveal the decrypted secret of a credential profile' },
  { name: 'vault:read', description: 'List encryption profiles and download recovery kits' },
  { name: 'vault:write', description: 'Create, update and delete encryption profiles' },
  { name: 'templates:read', description: 'View naming templates, retention policies and schedule presets' },
  { name: 'templates:write', description: 'Manage naming templates, retention policies and schedule presets' },
  { name: 'settings:read', description: 'View system settings and system tasks' },
  { name: 'settings:write', description: 'Change system settings, rate limits and system tasks' },
  { name: 'users:read', description: 'List and view users' },
  { name: 'users:write', description: 'Create, update and delete users' },
  { name: 'groups:read', description: 'List and view permission groups' },
  { name: 'groups:write', description: 'Create, update and delete permission groups and their scoped grants' },
  { name: 'api-keys:read', description: 'List own API keys (super administrators: all keys)' },
  { name: 'api-keys:write', description: 'Create, rotate, enable/disable, re-permission and delete own API keys' },
  { name: 'audit:read', description: 'Read the audit log' },
  { name: 'agents:read', description: 'List and view remote agents and their connection status' },
  { name: 'agents:write', description: 'Create, rename, enable/disable and revoke remote agents; issue enrollment tokens' },
] as const satisfies readonly { name: string; description: string }[];

/** One permission name of the catalog. */
export type Permission = (typeof PERMISSION_CATALOG)[number]['name'];

/** Every permission name, in catalog order. */
export const ALL_PERMISSIONS: readonly string[] = PERMISSION_CATALOG.map((entry) => entry.name);

const KNOWN = new Set(ALL_PERMISSIONS);

/** True when `name` is in the catalog. */
export function isKnownPermission(name: string): boolean {
  return KNOWN.has(name);
}

/** Names of `names` that are not in the catalog (empty when all are known). */
export function unknownPermissions(names: readonly string[]): string[] {
  return names.filter((name) => !KNOWN.has(name));
}

/** Resource types a scoped grant may name, with the permissions that can be scoped to them. */
export const SCOPABLE_RESOURCES: Readonly<Record<string, readonly string[]>> = {
  job: ['jobs:read', 'jobs:write', 'jobs:execute', 'history:read'],
  source: ['sources:read', 'sources:write', 'storage:restore'],
  destination: ['destinations:read', 'destinations:write', 'storage:read', 'storage:download', 'storage:restore', 'storage:delete'],
  notification: ['notifications:read', 'notifications:write'],
  credential: ['credentials:read', 'credentials:write', 'credentials:reveal'],
  vault: ['vault:read', 'vault:write'],
};

/** A named set of permissions the web app offers when creating an API key or a group (issue 47.5). */
export interface PermissionPreset {
  id: string;
  name: string;
  description: string;
  permissions: readonly string[];
}

const READ_ONLY: readonly Permission[] = [
  'jobs:read',
  'history:read',
  'dashboard:read',
  'sources:read',
  'destinations:read',
  'notifications:read',
  'storage:read',
  'templates:read',
  'settings:read',
  'agents:read',
];

/**
 * The documented presets (docs/security.md "Permission presets"). `read-only` sees what runs and how it went but
 * no secrets, recovery kits, users, keys or audit log; `operator` also runs jobs, downloads and restores backups;
 * `full` is every catalog permission (a key still never becomes a super administrator).
 */
export const PERMISSION_PRESETS: readonly PermissionPreset[] = [
  {
    id: 'read-only',
    name: 'Read-only',
    description: 'Dashboards and monitoring: jobs, history, sources, destinations, stored files, settings; nothing secret',
    permissions: READ_ONLY,
  },
  {
    id: 'operator',
    name: 'Operator',
    description: 'Read-only plus running jobs, downloading and restoring backups',
    permissions: [...READ_ONLY, 'jobs:execute', 'storage:download', 'storage:restore'],
  },
  { id: 'full', name: 'Full access', description: 'Every permission of the catalog', permissions: ALL_PERMISSIONS },
];
