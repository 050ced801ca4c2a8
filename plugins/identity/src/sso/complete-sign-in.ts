import { HttpError, NotFoundError, type RouteRequest } from '@holdfast/kernel';
import { AUDIT_ACTIONS } from '../audit/audit-trail.js';
import { SignInFailure } from '../audit/sign-in-failure.js';
import { isSecureRequest, sessionCookie } from '../auth/session-cookie.js';
import { DISABLED_ACCOUNT_MESSAGE, recordFailedSignIn, recordSignInFailure } from '../routes/auth-routes.js';
import { actorOf } from '../routes/common.js';
import type { IdentityServices } from '../services.js';
import { linkExternalIdentity, syncGroupFromClaims } from './account-linking.js';
import type { ResolvedSsoProvider } from './provider-store.js';
import { redirectResult } from './redirects.js';
import type { ExternalIdentity } from './types.js';

/**
 * Ends a successful single sign-on exactly like a password sign-in: links or provisions the user, syncs the mapped
 * group, opens a session through the session service, audits (`CREATE` for a provisioned user, `UPDATE` for a
 * group change, `LOGIN`), emits `user_login` (and `user_created` through the user service), and redirects the
 * browser to `redirectTo` with the session cookie.
 */
export async function completeSsoSignIn(
  identity: IdentityServices,
  request: RouteRequest,
  provider: ResolvedSsoProvider,
  external: ExternalIdentity,
  redirectTo: string,
) {
  const em = identity.database.em();
  const method = `sso:${provider.row.type}`;
  const providerId = provider.row.providerId;
  const { user, via } = await linkExternalIdentity(em, identity.users, provider, external);
  if (user.disabled) throw new SignInFailure(403, DISABLED_ACCOUNT_MESSAGE, 'disabled', { userId: user.id, email: user.email });
  if (via === 'provisioned') {
    await identity.audit.record(actorOf(request, user.id), {
      action: AUDIT_ACTIONS.create,
      resource: 'user',
      resourceId: user.id,
      details: { provisionedBy: method, providerId },
    });
  }
  const groupChange = await syncGroupFromClaims(em, user, provider, external.groups);
  if (groupChange) {
    await identity.audit.record(actorOf(request, user.id), {
      action: AUDIT_ACTIONS.update,
      resource: 'user',
      resourceId: user.id,
      details: { groupId: groupChange.to, previousGroupId: groupChange.from, syncedBy: method, providerId },
    });
  }
  const { session, token } = await identity.sessions.create(user.id, request.ip, request.userAgent ?? null);
  await identity.audit.record(actorOf(request, user.id), {
    action: AUDIT_ACTIONS.login,
    resource: 'session',
    resourceId: session.id,
    details: { authMethod: method, providerId, linkedBy: via },
  });
  void identity.events?.emit('user_login', { userName: user.name, email: user.email, timestamp: new Date().toISOString() });
  const secure = isSecureRequest(request, identity.config.trustProxy);
  // The OIDC state cookie is left to expire: its server-side row is already used up.
  return redirectResult(303, redirectTo, { 'Set-Cookie': sessionCookie(token, session.expiresAt, secure) });
}

/**
 * Runs the end of an SSO sign-in (OIDC callback, SAML ACS) and audits a refusal as `login.failed` (issue 47.5): the
 * reason of a {@link SignInFailure} with the account when known, `sso-error` for other refusals. `authMethod` and
 * `providerId` go into the details; never a code, token or assertion, nor the message (it may quote the provider).
 * An unknown provider (404) is not a sign-in attempt and is not audited.
 */
export async function auditedSsoSignIn<T>(identity: IdentityServices, request: RouteRequest, type: 'oidc' | 'saml', providerId: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const extra = { authMethod: `sso:${type}`, providerId: providerId.slice(0, 63) };
    if (error instanceof SignInFailure) await recordSignInFailure(identity, request, error, extra);
    else if (error instanceof HttpError && !(error instanceof NotFoundError) && error.status !== 404) await recordFailedSignIn(identity, request, null, '', 'sso-error', extra);
    throw error;
  }
}
