import { silentLogger, type AuthContext, type Authenticator, type KernelLogger, type RequestInfo } from '@holdfast/kernel';
import type { ApiKeyService } from '../api-keys/api-key-service.js';
import { looksLikeApiKey } from '../api-keys/key-format.js';
import type { User } from '../entities/user.js';
import type { GroupService } from '../groups/group-service.js';
import { ALL_PERMISSIONS, isKnownPermission } from '../permissions/catalog.js';
import type { SessionService } from '../sessions/session-service.js';
import { assertCsrf } from './csrf.js';
import { SESSION_COOKIE } from './session-cookie.js';

function bearerToken(request: RequestInfo): string | undefined {
  const header = request.headers.authorization;
  const value = Array.isArray(header) ? header[0] : header;
  const match = value ? /^Bearer\s+(\S+)\s*$/i.exec(value) : null;
  return match?.[1];
}

/**
 * SPEC "Authentication" 2-5: the session cookie first; only without a live session the Bearer key. Sessions of
 * super administrators hold every catalog permission; other sessions hold their group's unscoped permissions
 * (scoped grants are checked by the access policy). Keys are never super administrators and hold only their own
 * stored permissions. Cookie-authenticated mutations must pass the CSRF check (403 otherwise).
 */
export class IdentityAuthenticator implements Authenticator {
  constructor(
    private readonly sessions: SessionService,
    private readonly groups: GroupService,
    private readonly apiKeys: ApiKeyService,
    private readonly logger: KernelLogger = silentLogger,
    /** Whether the user owning a key may act (a disabled user's keys stop working); all may when not given. */
    private readonly isUserEnabled: (userId: string) => Promise<boolean> = async () => true,
  ) {}

  async authenticate(request: RequestInfo): Promise<AuthContext | null> {
    const sessionToken = request.cookie(SESSION_COOKIE);
    if (sessionToken) {
      const resolved = await this.sessions.resolve(sessionToken);
      if (resolved) {
        assertCsrf(request, sessionToken);
        return this.sessionContext(resolved.user);
      }
    }
    const token = bearerToken(request);
    if (!token || !looksLikeApiKey(token)) return null;
    try {
      const key = await this.apiKeys.validate(token);
      if (!(await this.isUserEnabled(key.userId))) {
        this.logger.debug({ apiKeyId: key.id }, 'API key rejected: its user is disabled');
        return null;
      }
      return {
        userId: key.userId,
        permissions: key.permissions.filter(isKnownPermission),
        isSuperAdmin: false,
        authMethod: 'apikey',
        apiKeyId: key.id,
        actorName: key.name,
      };
    } catch (error) {
      // invalid, disabled and expired all end as the same 401; the reason goes to the log only.
      this.logger.debug({ reason: (error as { reason?: string }).reason ?? String(error) }, 'API key rejected');
      return null;
    }
  }

  /** The context of a signed-in user. */
  async sessionContext(user: User): Promise<AuthContext> {
    const permissions = user.isSuperAdmin
      ? [...ALL_PERMISSIONS]
      : user.groupId
        ? (await this.groups.accessOf(user.groupId)).permissions.filter(isKnownPermission)
        : [];
    return { userId: user.id, permissions, isSuperAdmin: user.isSuperAdmin, authMethod: 'session', actorName: user.name };
  }
}
