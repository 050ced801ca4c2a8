import type { IdentityServices } from '@holdfast/identity';

/**
 * The server's composition without HTTP (`withOfflineStack`): the configured database, migrated, and the identity
 * services on it, for the `admin` and `keys` commands.
 */
export async function withIdentity<T>(work: (identity: IdentityServices) => Promise<T>): Promise<T> {
  const { withOfflineStack } = await import('@holdfast/server');
  const { IDENTITY_SERVICES } = await import('@holdfast/identity');
  return withOfflineStack(
    async ({ container }) => {
      const identity = container.resolve(IDENTITY_SERVICES);
      const result = await work(identity);
      await identity.apiKeys.idle();
      return result;
    },
    { discover: false },
  );
}

/** The user a command acts for: `--user <email>`, else the only super administrator. */
export async function resolveOwner(identity: IdentityServices, email: string | undefined): Promise<{ id: string; email: string }> {
  const users = await identity.users.list();
  if (email) {
    const found = users.find((user) => user.email.toLowerCase() === email.toLowerCase());
    if (!found) throw new Error(`no user with the email ${email}`);
    return found;
  }
  const admins = users.filter((user) => user.isSuperAdmin);
  if (admins.length !== 1) throw new Error('name the owning user with --user <email> (there is not exactly one super administrator)');
  return admins[0]!;
}
