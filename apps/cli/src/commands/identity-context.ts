import type { IdentityServices } from '@holdfast/identity';

/**
 * Opens the configured database (migrated) with the server's feature plugins and builds the identity services on
 * it, without listening, for the `admin` and `keys` commands.
 */
export async function withIdentity<T>(work: (identity: IdentityServices) => Promise<T>): Promise<T> {
  const { featurePlugins, loadRuntimeConfig, serverVersion } = await import('@holdfast/server');
  const { openDatabase } = await import('@holdfast/persistence');
  const { createIdentityServices, identityConfigFromEnv } = await import('@holdfast/identity');
  const { EventBus, silentLogger } = await import('@holdfast/kernel');
  const settings = loadRuntimeConfig(process.env, serverVersion());
  const database = await openDatabase({ ...settings, plugins: featurePlugins(), logger: silentLogger });
  try {
    await database.migrate();
    const identity = createIdentityServices(database, identityConfigFromEnv(process.env), new EventBus(), silentLogger);
    const result = await work(identity);
    await identity.apiKeys.idle();
    return result;
  } finally {
    await database.close();
  }
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
