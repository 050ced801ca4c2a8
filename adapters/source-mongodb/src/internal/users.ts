import type { Document, MongoClient } from 'mongodb';

/**
 * Restores users and roles as mongorestore does: the definitions (with their SCRAM credentials, never a clear
 * password) go into temporary admin collections and `_mergeAuthzCollections` merges them; the temporaries are
 * dropped afterwards. Needs the `restore` role. Users are renamed into `database` when it differs from theirs.
 */
export async function restoreUsersAndRoles(
  client: MongoClient,
  names: { source: string; database: string },
  json: Record<string, unknown>,
  warnings: string[],
): Promise<void> {
  const { database } = names;
  // References to the source database (granted roles, privilege resources) follow the rename.
  const moved = (ref: Document): Document => (ref.db === names.source ? { ...ref, db: database } : ref);
  const users: Document[] = ((json.users ?? []) as Document[]).map((user) => ({
    ...strip(user),
    _id: `${database}.${String(user.user)}`,
    db: database,
    roles: ((user.roles ?? []) as Document[]).map(moved),
  }));
  const roles: Document[] = ((json.roles ?? []) as Document[]).map((role) => ({
    ...strip(role),
    _id: `${database}.${String(role.role)}`,
    db: database,
    roles: ((role.roles ?? []) as Document[]).map(moved),
    privileges: ((role.privileges ?? []) as Document[]).map((privilege) => ({ ...privilege, resource: moved((privilege.resource ?? {}) as Document) })),
  }));
  if (users.length === 0 && roles.length === 0) return;
  const admin = client.db('admin');
  const suffix = `${Date.now()}`;
  const tempUsers = `holdfast_tempusers_${suffix}`;
  const tempRoles = `holdfast_temproles_${suffix}`;
  try {
    if (users.length > 0) await admin.collection<Document>(tempUsers).insertMany(users);
    if (roles.length > 0) await admin.collection<Document>(tempRoles).insertMany(roles);
    await admin.command({
      _mergeAuthzCollections: 1,
      tempUsersCollection: `admin.${tempUsers}`,
      tempRolesCollection: `admin.${tempRoles}`,
      drop: false,
      db: database,
    });
  } finally {
    for (const name of [tempUsers, tempRoles]) await admin.command({ drop: name }).catch(() => undefined);
  }
  const withoutCredentials = users.filter((user) => !user.credentials).map((user) => String(user.user));
  if (withoutCredentials.length > 0) warnings.push(`users restored without credentials (set their passwords): ${withoutCredentials.join(', ')}`);
}

/** usersInfo/rolesInfo add fields that are not part of the stored definition. */
function strip(document: Document): Document {
  const { mechanisms: _m, inheritedRoles: _ir, inheritedPrivileges: _ip, isBuiltin: _b, ...rest } = document;
  return rest;
}
