import { defineRoute, HttpError, routeResult, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { actorOf, authOf, errors } from '../routes/common.js';
import { recordFailedSignIn, signIn, signedInSchema } from '../routes/auth-routes.js';
import type { IdentityServices } from '../services.js';
import { finishPendingSignIn, requirePendingSignIn } from './pending-sign-in.js';
import { reauthenticate, reauthenticationBody } from './reauthenticate.js';
import { freshFromReauthentication, guardFactorChange } from '../protected-actions/factor-changes.js';

const statusSchema = z
  .object({ enabled: z.boolean(), enrollmentPending: z.boolean(), backupCodesRemaining: z.number().int() })
  .meta({ id: 'TwoFactorStatus' });
const backupCodesSchema = z
  .object({ backupCodes: z.array(z.string()).describe('Single-use codes, shown this once; store them offline') })
  .meta({ id: 'BackupCodes' });
const code = z.string().min(1).max(20);

/** Audit resource of two-factor changes. */
const RESOURCE = 'two-factor';

/** TOTP enrollment and management (own account, browser session only) and the second step of sign-in. */
export function twoFactorRoutes(services: IdentityServices): RouteDefinition[] {
  const { twoFactor, audit, users } = services;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/auth/two-factor',
      summary: 'Whether two-factor sign-in is on for the caller and how many backup codes are left',
      tags: ['auth'],
      access: { sessionOnly: true },
      responses: { 200: { description: 'Two-factor status.', schema: statusSchema }, ...errors(401, 403) },
      handler: async (request) => twoFactor.status(authOf(request).userId),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/two-factor/enroll',
      summary: 'Start TOTP enrollment: a new secret as an otpauth:// URI (QR code) and as a manual key',
      tags: ['auth'],
      access: { sessionOnly: true },
      request: { body: z.strictObject({}) },
      responses: {
        200: {
          description: 'Scan the URI or type the key into an authenticator app, then confirm with a code. Not active until confirmed.',
          schema: z.object({ otpauthUri: z.string(), manualKey: z.string() }).meta({ id: 'TotpEnrollment' }),
        },
        ...errors(401, 403, 409),
      },
      handler: async (request) => {
        const user = await users.get(authOf(request).userId);
        // With a passkey already, adding TOTP needs a fresh second factor (issue 45.4); while TOTP is on this is a 409.
        const begin = () => twoFactor.beginEnrollment(user);
        const enrollment = (await twoFactor.isEnabled(user.id)) ? await begin() : await guardFactorChange(services, request, 'two-factor.enroll', begin);
        await audit.record(actorOf(request), { action: 'two-factor.enroll', resource: RESOURCE, resourceId: user.id });
        return routeNoStore(enrollment);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/two-factor/confirm',
      summary: 'Finish TOTP enrollment with a first code; answers the ten backup codes once',
      tags: ['auth'],
      access: { sessionOnly: true },
      request: { body: z.strictObject({ code }) },
      responses: { 200: { description: 'Two-factor sign-in is on.', schema: backupCodesSchema }, ...errors(400, 401, 403, 404, 409, 429) },
      handler: async (request) => {
        const userId = authOf(request).userId;
        const backupCodes = await twoFactor.confirm(userId, request.body.code);
        await audit.record(actorOf(request), { action: 'two-factor.enable', resource: RESOURCE, resourceId: userId });
        return routeNoStore({ backupCodes });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/two-factor/backup-codes',
      summary: 'Replace the backup codes (re-authenticate with the password or a current code)',
      tags: ['auth'],
      access: { sessionOnly: true },
      request: { body: reauthenticationBody },
      responses: { 200: { description: 'New backup codes; the old ones stop working.', schema: backupCodesSchema }, ...errors(400, 401, 403, 409, 429) },
      handler: async (request) => {
        const user = await users.get(authOf(request).userId);
        const proof = await reauthenticate(services, user, request.body);
        await freshFromReauthentication(services, request, proof);
        // New backup codes are new second factors: a password alone is not enough (issue 45.4).
        const backupCodes = await guardFactorChange(services, request, 'two-factor.backup-codes', () => twoFactor.regenerateBackupCodes(user.id));
        await audit.record(actorOf(request), { action: 'two-factor.backup-codes', resource: RESOURCE, resourceId: user.id, details: { reauthenticatedWith: proof } });
        return routeNoStore({ backupCodes });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/two-factor/disable',
      summary: 'Turn two-factor sign-in off (re-authenticate with the password or a current code)',
      tags: ['auth'],
      access: { sessionOnly: true },
      request: { body: reauthenticationBody },
      responses: { 204: { description: 'Two-factor sign-in is off.' }, ...errors(400, 401, 403, 409, 429) },
      handler: async (request) => {
        const user = await users.get(authOf(request).userId);
        const proof = await reauthenticate(services, user, request.body);
        await freshFromReauthentication(services, request, proof);
        await guardFactorChange(services, request, 'two-factor.disable', () => twoFactor.disable(user.id));
        await audit.record(actorOf(request), { action: 'two-factor.disable', resource: RESOURCE, resourceId: user.id, details: { reauthenticatedWith: proof } });
        return undefined;
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/two-factor/verify',
      summary: 'Second step of a password sign-in: a TOTP code or a backup code; sets the session cookie',
      tags: ['auth'],
      // Public: the caller has no session yet; the pending-sign-in cookie of the password step authorises.
      access: { public: true },
      rateLimit: 'auth',
      request: {
        body: z
          .strictObject({ code: code.optional(), backupCode: code.optional() })
          .refine((body) => (body.code === undefined) !== (body.backupCode === undefined), { message: 'Send exactly one of `code` and `backupCode`' }),
      },
      responses: { 200: { description: 'Signed in.', schema: signedInSchema }, ...errors(400, 401, 429) },
      handler: async (request) => {
        const pending = await requirePendingSignIn(services.oneTimeValues, request);
        let kind: Awaited<ReturnType<typeof twoFactor.verify>>;
        try {
          kind = await twoFactor.verify(pending.userId, request.body);
        } catch (error) {
          // A wrong second factor after the right password is a failed sign-in too (issue 47.5); never the code.
          if (error instanceof HttpError && error.status === 401) {
            const user = await users.find(pending.userId);
            const reason = request.body.backupCode !== undefined ? 'wrong-backup-code' : 'wrong-second-factor';
            await recordFailedSignIn(services, request, pending.userId, user?.email ?? '', reason);
          }
          throw error;
        }
        await finishPendingSignIn(services.oneTimeValues, request);
        const user = await users.get(pending.userId);
        return signIn(services, request, user, 200, { authMethod: 'password', secondFactor: kind });
      },
    }),
  ];
}

/** Answers that carry a secret once are never cached. */
function routeNoStore<T>(body: T) {
  return routeResult({ status: 200, headers: { 'Cache-Control': 'no-store' }, body });
}
