import { AccountEntity } from './account.js';
import { ApiKeyEntity } from './api-key.js';
import { AuditLogEntity } from './audit-log.js';
import { GroupEntity, GroupGrantEntity } from './group.js';
import { PasskeyEntity, TwoFactorEntity, VerificationEntity } from './second-factor.js';
import { SessionEntity } from './session.js';
import { SsoProviderEntity } from './sso-provider.js';
import { UserEntity } from './user.js';

export * from './account.js';
export * from './api-key.js';
export * from './audit-log.js';
export * from './group.js';
export * from './second-factor.js';
export * from './session.js';
export * from './sso-provider.js';
export * from './user.js';

/** Every entity schema the identity plugin owns, in one list for the ORM. */
export const identityEntities = [
  UserEntity,
  GroupEntity,
  GroupGrantEntity,
  SessionEntity,
  AccountEntity,
  ApiKeyEntity,
  AuditLogEntity,
  TwoFactorEntity,
  PasskeyEntity,
  VerificationEntity,
  SsoProviderEntity,
] as const;
