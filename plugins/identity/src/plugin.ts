import { ORM_DATABASE } from '@holdfast/orm-port';
import { identitySealedSecrets } from './sealed-secrets.js';
import { optionalToken, resolveOptional, SEALED_SECRET_HOLDERS, TOKENS, type AuditWriter, type HoldfastPlugin } from '@holdfast/kernel';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { identityConfigFromEnv, type IdentityConfig } from './config.js';
import { identityEntities } from './entities/index.js';
import { identityMigrations } from './migrations/index.js';
import { identityRoutes } from './routes/index.js';
import { IdentityProtectedActionGuard } from './protected-actions/protected-action-guard.js';
import { createSsoServices, sealerFrom } from './sso/index.js';
import { createIdentityServices, type IdentityServices } from './services.js';
import { createFirstAdmin } from './users/first-admin.js';

/** Token of the plugin's own services (for the CLI and tests; other plugins use the kernel ports). */
export const IDENTITY_SERVICES = Symbol.for('holdfast:identity-services') as InjectionToken<IdentityServices>;

/** Options of {@link createIdentityPlugin}. */
export interface IdentityPluginOptions {
  /** Environment to read `DISABLE_EMAIL_LOGIN`, `TRUST_PROXY`, `HOLDFAST_ADMIN_*` from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Values that win over the environment. */
  config?: Partial<IdentityConfig>;
}

/**
 * The identity plugin: users, groups, sessions, API keys, the permission catalog, scoped grants, rate limits and
 * the audit log. Registers `TOKENS.Authenticator`, `TOKENS.AccessPolicy`, `TOKENS.RateLimiter`, `TOKENS.AuditWriter` and
 * `TOKENS.ProtectedActions` (the fresh-second-factor guard of actions that can lose backups).
 */
export function createIdentityPlugin(options: IdentityPluginOptions = {}): HoldfastPlugin {
  const config = identityConfigFromEnv(options.env ?? process.env, options.config);
  let services: IdentityServices | undefined;
  // Built on first use: `register` runs before the database exists, the factories below run after.
  const servicesOf = (container: DependencyContainer): IdentityServices => {
    const logger = container.resolve(TOKENS.Logger);
    services ??= createIdentityServices(
      container.resolve(ORM_DATABASE),
      config,
      container.resolve(TOKENS.EventBus),
      logger.child?.({ plugin: 'identity' }) ?? logger,
      () => resolveOptional(container, TOKENS.SecretSealer),
      () => resolveOptional(container, TOKENS.Settings),
      () => resolveOptional(container, TOKENS.ResourceNames),
    );
    return services;
  };

  return {
    name: 'identity',
    provides: [IDENTITY_SERVICES, TOKENS.Authenticator, TOKENS.AccessPolicy, TOKENS.RateLimiter, TOKENS.AuditWriter, TOKENS.ProtectedActions, SEALED_SECRET_HOLDERS],
    // Settings and the secret sealer belong to the catalog, which itself needs identity's access policy and audit
    // writer: identity looks them up when used, so the two plugins do not form a start-order cycle.
    requires: [
      ORM_DATABASE,
      TOKENS.EventBus,
      TOKENS.Logger,
      optionalToken(TOKENS.Settings),
      optionalToken(TOKENS.SecretSealer),
      // The catalog's record names for audit entries, looked up when the log is read.
      optionalToken(TOKENS.ResourceNames),
    ],
    entities: identityEntities,
    migrations: identityMigrations,
    register(container) {
      container.register(IDENTITY_SERVICES, { useFactory: servicesOf });
      container.register(TOKENS.Authenticator, { useFactory: (c) => servicesOf(c).authenticator });
      container.register(TOKENS.AccessPolicy, { useFactory: (c) => servicesOf(c).accessPolicy });
      container.register(TOKENS.RateLimiter, { useFactory: (c) => servicesOf(c).rateLimiter });
      container.register(TOKENS.AuditWriter, { useFactory: (c) => auditWriterOver(servicesOf(c)) });
      container.register(TOKENS.ProtectedActions, { useFactory: (c) => new IdentityProtectedActionGuard(servicesOf(c)) });
      container.register(SEALED_SECRET_HOLDERS, { useValue: identitySealedSecrets });
    },
    // Single sign-on (src/sso) mounts its own routes beside the core ones.
    routes: (container) => [
      ...identityRoutes(servicesOf(container)),
      ...createSsoServices(servicesOf(container), sealerFrom(container), options.env ?? process.env).routes(),
    ],
    async start(container) {
      const identity = servicesOf(container);
      await bootstrapAdminFromEnv(identity);
      identity.housekeeping.start();
    },
    async stop() {
      await services?.housekeeping.stop();
      await services?.apiKeys.idle();
    },
  };
}

/** The kernel's audit port over this plugin's audit trail; a failed write is logged, never thrown to the caller. */
function auditWriterOver(identity: IdentityServices): AuditWriter {
  return {
    async write(entry) {
      const { userId = null, ipAddress = null, userAgent = null, action, resource, resourceId = null, details } = entry;
      try {
        await identity.audit.record({ userId, ipAddress, userAgent }, { action, resource, resourceId, details: details ?? undefined });
      } catch (error) {
        identity.logger.error({ err: error, action, resource }, 'audit entry could not be written');
      }
    },
  };
}

/** First run: `HOLDFAST_ADMIN_EMAIL` + `HOLDFAST_ADMIN_PASSWORD` create a super administrator when no user exists. */
async function bootstrapAdminFromEnv(identity: IdentityServices): Promise<void> {
  const { adminEmail, adminPassword } = identity.config;
  if (!adminEmail && !adminPassword) return;
  if (!adminEmail || !adminPassword) {
    identity.logger.warn('HOLDFAST_ADMIN_EMAIL and HOLDFAST_ADMIN_PASSWORD must both be set to create the first administrator');
    return;
  }
  if ((await identity.users.count()) > 0) return;
  const user = await createFirstAdmin(identity.database, { email: adminEmail, password: adminPassword }, identity.events);
  await identity.audit.record({ userId: user.id }, { action: 'CREATE', resource: 'user', resourceId: user.id, details: { bootstrap: 'environment', isSuperAdmin: true } });
  identity.logger.info({ email: user.email }, 'created the first super administrator from HOLDFAST_ADMIN_EMAIL');
}
