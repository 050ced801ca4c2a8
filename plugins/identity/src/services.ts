import type { OrmDatabase } from '@holdfast/orm-port';
import { silentLogger, type EventBus, type KernelLogger, type ResourceNames, type SettingsReader } from '@holdfast/kernel';
import { GrantAccessPolicy } from './access/access-policy.js';
import { ApiKeyService } from './api-keys/api-key-service.js';
import { pruneAuditLog } from './audit/audit-retention.js';
import { AuditTrail } from './audit/audit-trail.js';
import { IdentityAuthenticator } from './auth/authenticator.js';
import type { IdentityConfig } from './config.js';
import { GroupService } from './groups/group-service.js';
import { HousekeepingTask } from './housekeeping.js';
import { deleteExpiredCounters, SettingsRateLimiter } from './rate-limit/settings-rate-limiter.js';
import { SessionService } from './sessions/session-service.js';
import { IdentitySettings } from './settings/identity-settings.js';
import { UserService } from './users/user-service.js';
import { PasskeyService } from './passkeys/passkey-service.js';
import { OneTimeValues } from './two-factor/one-time-values.js';
import { TwoFactorService, type SealerSource } from './two-factor/two-factor-service.js';

/** Every identity service, built once per process over one database. */
export interface IdentityServices {
  config: IdentityConfig;
  database: OrmDatabase;
  events: EventBus | undefined;
  logger: KernelLogger;
  settings: IdentitySettings;
  users: UserService;
  groups: GroupService;
  sessions: SessionService;
  apiKeys: ApiKeyService;
  audit: AuditTrail;
  authenticator: IdentityAuthenticator;
  accessPolicy: GrantAccessPolicy;
  rateLimiter: SettingsRateLimiter;
  housekeeping: HousekeepingTask;
  /** Pending two-factor sign-ins and WebAuthn challenges. */
  oneTimeValues: OneTimeValues;
  twoFactor: TwoFactorService;
  passkeys: PasskeyService;
}

/** Builds the services. Nothing touches the database until a method is called. */
export function createIdentityServices(
  database: OrmDatabase,
  config: IdentityConfig,
  events?: EventBus,
  logger: KernelLogger = silentLogger,
  /** The system-key sealer (the catalog registers it); TOTP enrollment answers 503 without one. */
  sealer: SealerSource = () => undefined,
  /** The system settings (`TOKENS.Settings`, owned by the catalog); defaults apply without one. */
  settingsSource: () => SettingsReader | undefined = () => undefined,
  /** Names of other plugins' records for the audit log (`TOKENS.ResourceNames`, owned by the catalog). */
  resourceNames: () => ResourceNames | undefined = () => undefined,
): IdentityServices {
  const settings = new IdentitySettings(settingsSource);
  const groups = new GroupService(database);
  const sessions = new SessionService(database);
  const apiKeys = new ApiKeyService(database, logger);
  const audit = new AuditTrail(database, resourceNames);
  const oneTimeValues = new OneTimeValues(database);
  const rateLimiter = new SettingsRateLimiter(database, settings, logger);
  const housekeeping = new HousekeepingTask(
    [
      { name: 'audit-retention', run: () => pruneAuditLog(audit, settings) },
      { name: 'expired-sessions', run: () => sessions.deleteExpired() },
      { name: 'expired-rate-limit-counters', run: () => deleteExpiredCounters(database) },
      { name: 'expired-verifications', run: () => oneTimeValues.deleteExpired() },
    ],
    logger,
    config.housekeepingIntervalMs,
  );
  const users = new UserService(database, events);
  return {
    config,
    database,
    events,
    logger,
    settings,
    users,
    groups,
    sessions,
    apiKeys,
    audit,
    authenticator: new IdentityAuthenticator(sessions, groups, apiKeys, logger, async (userId) => (await users.find(userId))?.disabled === false),
    accessPolicy: new GrantAccessPolicy(database, groups),
    rateLimiter,
    housekeeping,
    oneTimeValues,
    twoFactor: new TwoFactorService(database, sealer, rateLimiter),
    passkeys: new PasskeyService(database, oneTimeValues),
  };
}
