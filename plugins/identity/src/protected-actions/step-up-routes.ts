import { defineRoute, HttpError, UnauthorizedError, type RouteDefinition } from '@holdfast/kernel';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { z } from 'zod';
import { authenticationResponse } from '../passkeys/passkey-routes.js';
import { relyingPartyOf } from '../passkeys/relying-party.js';
import { actorOf, authOf, errors } from '../routes/common.js';
import type { IdentityServices } from '../services.js';
import { isFresh, provableFactors, sessionOfRequest } from './protected-action-guard.js';

const code = z.string().min(1).max(20);

const stepUpStateSchema = z
  .object({
    methods: z.array(z.enum(['totp', 'passkey'])).describe('The second factors the user can prove; empty: protected actions need none'),
    secondFactorAt: z.string().nullable().describe('When this session last proved a second factor'),
    freshUntil: z.string().nullable().describe('Protected actions are allowed without asking until then'),
    isFresh: z.boolean(),
    windowSeconds: z.number().int(),
  })
  .meta({ id: 'StepUpState' });

/** A 401 of the factor check is a refused proof, not a lost session: answered as 403 with the message. */
function asRefusal(error: unknown): never {
  if (error instanceof HttpError && error.status === 401) throw new HttpError(403, error.message === 'Unauthorized' ? 'The second factor was not accepted' : error.message);
  throw error;
}

/**
 * Step-up (issue 45.4): a signed-in user proves a second factor again (TOTP code, backup code or passkey), which
 * allows protected actions (deleting backups, destinations, encryption profiles; unlocking; changing retention) for
 * the configured window. Browser sessions only: API keys use their `allowBackupDeletion` option instead.
 */
export function stepUpRoutes(services: IdentityServices): RouteDefinition[] {
  const windowMs = () => services.config.stepUpWindowMs;
  const stateOf = async (request: Parameters<typeof authOf>[0]) => {
    const user = await services.users.get(authOf(request).userId);
    const session = await sessionOfRequest(services, request);
    const at = session?.secondFactorAt ?? null;
    const fresh = isFresh(session, windowMs());
    return {
      methods: await provableFactors(services, user),
      secondFactorAt: at?.toISOString() ?? null,
      freshUntil: fresh && at ? new Date(at.getTime() + windowMs()).toISOString() : null,
      isFresh: fresh,
      windowSeconds: Math.round(windowMs() / 1000),
    };
  };
  return [
    defineRoute({
      method: 'GET',
      path: '/api/auth/step-up',
      summary: 'Whether this session has a fresh second factor for protected actions, and which factors the user can prove',
      tags: ['auth'],
      access: { sessionOnly: true },
      responses: { 200: { description: 'The step-up state of the session.', schema: stepUpStateSchema }, ...errors(401, 403) },
      handler: async (request) => stateOf(request),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/step-up/passkey-options',
      summary: 'Options for confirming a protected action with one of the caller\'s passkeys',
      tags: ['auth'],
      access: { sessionOnly: true },
      rateLimit: 'auth',
      request: { body: z.strictObject({}) },
      responses: { 200: { description: 'Request options for navigator.credentials.get(); valid five minutes, once.', schema: z.looseObject({ challenge: z.string() }) }, ...errors(401, 403, 409, 429) },
      handler: async (request) => services.passkeys.authenticationOptions(relyingPartyOf(request, services.config.publicUrl), authOf(request).userId),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/step-up',
      summary: 'Prove a second factor again (TOTP code, backup code or passkey assertion) to allow protected actions for a few minutes',
      tags: ['auth'],
      access: { sessionOnly: true },
      rateLimit: 'auth',
      request: {
        body: z
          .strictObject({ code: code.optional().describe('A current code of the authenticator app'), backupCode: code.optional(), passkey: authenticationResponse.optional() })
          .refine((body) => [body.code, body.backupCode, body.passkey].filter((value) => value !== undefined).length === 1, {
            message: 'Send exactly one of `code`, `backupCode` and `passkey`',
          }),
      },
      responses: {
        200: { description: 'The second factor is fresh; protected actions are allowed until `freshUntil`.', schema: stepUpStateSchema },
        ...errors(400, 401, 403, 409, 429),
      },
      handler: async (request) => {
        const auth = authOf(request);
        const session = await sessionOfRequest(services, request);
        if (!session) throw new UnauthorizedError('no-session');
        let method: 'totp' | 'backup-code' | 'passkey';
        try {
          if (request.body.passkey) {
            const assertion = await services.passkeys.authenticate(relyingPartyOf(request, services.config.publicUrl), request.body.passkey as AuthenticationResponseJSON);
            if (assertion.user.id !== auth.userId) throw new HttpError(403, 'This passkey belongs to another account');
            method = 'passkey';
          } else {
            if (!(await services.twoFactor.isEnabled(auth.userId))) throw new HttpError(409, 'Two-factor sign-in is not on for this account; confirm with a passkey instead');
            method = await services.twoFactor.verify(auth.userId, { code: request.body.code, backupCode: request.body.backupCode });
          }
        } catch (error) {
          if (error instanceof HttpError && (error.status === 401 || error.status === 403)) {
            await services.audit.record(actorOf(request), { action: 'step-up.failed', resource: 'session', resourceId: session.id, details: { method: request.body.passkey ? 'passkey' : request.body.code ? 'totp' : 'backup-code' } });
          }
          asRefusal(error);
        }
        await services.sessions.markSecondFactor(session.id, method);
        await services.audit.record(actorOf(request), { action: 'step-up', resource: 'session', resourceId: session.id, details: { method } });
        return stateOf(request);
      },
    }),
  ];
}
