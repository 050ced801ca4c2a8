import { silentLogger, type DatabasePort, type EventBus, type KernelLogger } from '@holdfast/kernel';
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
import { SettingsReader } from './settings/settings-reader.js';
import { UserService } from './users/user-service.js';

/** Every identity service, built once per process over one database. */
export interface IdentityServices {
  config: IdentityConfig;
  database: DatabasePort;
  events: EventBus | undefined;
  logger: KernelLogger;
  settings: SettingsReader;
  users: UserService;
  groups: GroupService;
  sessions: SessionService;
  apiKeys: ApiKeyService;
  audit: AuditTrail;
  authenticator: IdentityAuthenticator;
  accessPolicy: GrantAccessPolicy;
  rateLimiter: SettingsRateLimiter;
  housekeeping: HousekeepingTask;
}

/** Builds the services. Nothing touches the database until a method is called. */
export function createIdentityServices(
  database: DatabasePort,
  config: IdentityConfig,
  events?: EventBus,
  logger: KernelLogger = silentLogger,
): IdentityServices {
  const settings = new SettingsReader(database, config.settingsCacheMs);
  const groups = new GroupService(database);
  const sessions = new SessionService(database);
  const apiKeys = new ApiKeyService(database, logger);
  const audit = new AuditTrail(database);
  const housekeeping = new HousekeepingTask(
    [
      { name: 'audit-retention', run: () => pruneAuditLog(audit, settings) },
      { name: 'expired-sessions', run: () => sessions.deleteExpired() },
      { name: 'expired-rate-limit-counters', run: () => deleteExpiredCounters(database) },
    ],
    logger,
    config.housekeepingIntervalMs,
  );
  return {
    config,
    database,
    events,
    logger,
    settings,
    users: new UserService(database, events),
    groups,
    sessions,
    apiKeys,
    audit,
    authenticator: new IdentityAuthenticator(sessions, groups, apiKeys, logger),
    accessPolicy: new GrantAccessPolicy(database, groups),
    rateLimiter: new SettingsRateLimiter(database, settings, logger),
    housekeeping,
  };
}
