import { defineRoute, HttpError, lineText, routeResult, type RouteDefinition } from '@holdfast/kernel';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { z } from 'zod';
import type { Passkey } from '../entities/second-factor.js';
import { actorOf, authOf, errors, idParams } from '../routes/common.js';
import { recordFailedSignIn, recordSignInFailure, signIn, signedInSchema } from '../routes/auth-routes.js';
import { SignInFailure } from '../audit/sign-in-failure.js';
import { guardFactorChange } from '../protected-actions/factor-changes.js';
import type { IdentityServices } from '../services.js';
import { finishPendingSignIn, peekPendingSignIn } from '../two-factor/pending-sign-in.js';
import { relyingPartyOf } from './relying-party.js';

const passkeySchema = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    credentialId: z.string().describe('WebAuthn credential id (base64url); public'),
    deviceType: z.enum(['singleDevice', 'multiDevice']).or(z.string()),
    backedUp: z.boolean(),
    transports: z.array(z.string()),
    aaguid: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: 'Passkey' });

function passkeyJson(passkey: Passkey): z.infer<typeof passkeySchema> {
  return {
    id: passkey.id,
    name: passkey.name ?? null,
    credentialId: passkey.credentialId,
    deviceType: passkey.deviceType,
    backedUp: passkey.backedUp,
    transports: passkey.transports ? (JSON.parse(passkey.transports) as string[]) : [],
    aaguid: passkey.aaguid ?? null,
    createdAt: passkey.createdAt.toISOString(),
  };
}

const b64url = z.string().max(16_384).regex(/^[A-Za-z0-9_-]*$/, 'must be base64url');
// The browser's PublicKeyCredential.toJSON(); fields the server does not read are allowed through.
const registrationResponse = z.looseObject({
  id: b64url,
  rawId: b64url,
  type: z.literal('public-key'),
  response: z.looseObject({ clientDataJSON: b64url, attestationObject: b64url, transports: z.array(z.string().max(50)).max(10).optional() }),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.string().max(50).optional(),
});
export const authenticationResponse = z.looseObject({
  id: b64url,
  rawId: b64url,
  type: z.literal('public-key'),
  response: z.looseObject({ clientDataJSON: b64url, authenticatorData: b64url, signature: b64url, userHandle: b64url.optional() }),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.string().max(50).optional(),
});
const optionsSchema = z
  .looseObject({ challenge: z.string() })
  .describe('Pass to navigator.credentials.create()/get() (as PublicKeyCredential*OptionsJSON)');
const passkeyName = lineText({ min: 1, max: 100 }).trim();

/** Passkey management (own account, browser session only) and passkey sign-in (passwordless or second factor). */
export function passkeyRoutes(services: IdentityServices): RouteDefinition[] {
  const { passkeys, audit, users } = services;
  const rpOf = (request: Parameters<typeof relyingPartyOf>[0]) => relyingPartyOf(request, services.config.publicUrl);
  return [
    defineRoute({
      method: 'GET',
      path: '/api/auth/passkeys',
      summary: "List the caller's passkeys",
      tags: ['auth'],
      access: { sessionOnly: true },
      responses: { 200: { description: 'Own passkeys.', schema: z.object({ passkeys: z.array(passkeySchema), passkeyTwoFactor: z.boolean() }) }, ...errors(401, 403) },
      handler: async (request) => {
        const user = await users.get(authOf(request).userId);
        return { passkeys: (await passkeys.list(user.id)).map(passkeyJson), passkeyTwoFactor: Boolean(user.passkeyTwoFactor) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/passkeys/registration-options',
      summary: 'Options for registering a new passkey (navigator.credentials.create)',
      tags: ['auth'],
      access: { sessionOnly: true },
      request: { body: z.strictObject({}) },
      responses: { 200: { description: 'Creation options; the challenge is valid for five minutes, once.', schema: optionsSchema }, ...errors(400, 401, 403) },
      handler: async (request) => passkeys.registrationOptions(await users.get(authOf(request).userId), rpOf(request)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/passkeys',
      summary: 'Register a passkey from the authenticator response',
      tags: ['auth'],
      access: { sessionOnly: true },
      request: { body: z.strictObject({ name: passkeyName.optional(), response: registrationResponse }) },
      responses: { 201: { description: 'Registered.', schema: passkeySchema }, ...errors(400, 401, 403, 409) },
      handler: async (request) => {
        const user = await users.get(authOf(request).userId);
        const passkey = await guardFactorChange(services, request, 'passkey.create', () =>
          passkeys.register(user, rpOf(request), request.body.response as RegistrationResponseJSON, request.body.name),
        );
        await audit.record(actorOf(request), { action: 'passkey.create', resource: 'passkey', resourceId: passkey.id, details: { deviceType: passkey.deviceType, backedUp: passkey.backedUp } });
        return routeCreated(passkeyJson(passkey));
      },
    }),
    defineRoute({
      method: 'PATCH',
      path: '/api/auth/passkeys/:id',
      summary: 'Rename one of the caller\'s passkeys',
      tags: ['auth'],
      access: { sessionOnly: true },
      request: { params: idParams, body: z.strictObject({ name: passkeyName }) },
      responses: { 200: { description: 'Renamed.', schema: passkeySchema }, ...errors(400, 401, 403, 404) },
      handler: async (request) => {
        const passkey = await passkeys.rename(authOf(request).userId, request.params.id, request.body.name);
        await audit.record(actorOf(request), { action: 'passkey.rename', resource: 'passkey', resourceId: passkey.id });
        return passkeyJson(passkey);
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/auth/passkeys/:id',
      summary: "Delete one of the caller's passkeys (the last one also turns passkey two-factor off)",
      tags: ['auth'],
      access: { sessionOnly: true },
      request: { params: idParams },
      responses: { 204: { description: 'Deleted.' }, ...errors(401, 403, 404) },
      handler: async (request) => {
        await guardFactorChange(services, request, 'passkey.delete', () => passkeys.remove(authOf(request).userId, request.params.id));
        await audit.record(actorOf(request), { action: 'passkey.delete', resource: 'passkey', resourceId: request.params.id });
        return undefined;
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/auth/passkeys/two-factor',
      summary: 'Require (or stop requiring) a passkey after the password at sign-in',
      tags: ['auth'],
      access: { sessionOnly: true },
      request: { body: z.strictObject({ enabled: z.boolean() }) },
      responses: { 200: { description: 'The new setting.', schema: z.object({ passkeyTwoFactor: z.boolean() }) }, ...errors(400, 401, 403, 409) },
      handler: async (request) => {
        const userId = authOf(request).userId;
        await passkeys.setTwoFactor(userId, request.body.enabled);
        await audit.record(actorOf(request), { action: 'passkey.two-factor', resource: 'user', resourceId: userId, details: { enabled: request.body.enabled } });
        return { passkeyTwoFactor: request.body.enabled };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/passkeys/sign-in/options',
      summary: 'Options for signing in with a passkey: passwordless, or the second step of a password sign-in',
      tags: ['auth'],
      access: { public: true },
      rateLimit: 'auth',
      request: { body: z.strictObject({}) },
      responses: { 200: { description: 'Request options; the challenge is valid for five minutes, once.', schema: optionsSchema }, ...errors(400, 409, 429) },
      handler: async (request) => {
        // A pending password sign-in narrows the choice to that account's passkeys.
        const pending = await peekPendingSignIn(services.oneTimeValues, request);
        return passkeys.authenticationOptions(rpOf(request), pending?.userId ?? null);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/passkeys/sign-in',
      summary: 'Sign in with a passkey assertion; sets the session cookie',
      tags: ['auth'],
      access: { public: true },
      rateLimit: 'auth',
      request: { body: z.strictObject({ response: authenticationResponse }) },
      responses: { 200: { description: 'Signed in.', schema: signedInSchema }, ...errors(400, 401, 429) },
      handler: async (request) => {
        // A refused assertion is a failed sign-in (issue 47.5): audited with its reason, the passkey's id and the
        // account when known; never the assertion itself.
        const credentialId = request.body.response.id;
        let assertion: Awaited<ReturnType<typeof passkeys.authenticate>>;
        try {
          assertion = await passkeys.authenticate(rpOf(request), request.body.response as AuthenticationResponseJSON);
        } catch (error) {
          if (error instanceof SignInFailure) await recordSignInFailure(services, request, error, { authMethod: 'passkey', credentialId: credentialId.slice(0, 512) });
          throw error;
        }
        const extra = { authMethod: 'passkey', credentialId: credentialId.slice(0, 512), passkeyId: assertion.passkey.id };
        if (assertion.asSecondFactor) {
          const pending = await finishPendingSignIn(services.oneTimeValues, request);
          if (pending.userId !== assertion.user.id) {
            await recordFailedSignIn(services, request, pending.userId, (await users.find(pending.userId))?.email ?? '', 'passkey-wrong-account', extra);
            throw new HttpError(401, 'This passkey belongs to another account');
          }
        }
        if (assertion.user.disabled) await recordFailedSignIn(services, request, assertion.user.id, assertion.user.email, 'disabled', extra);
        const details = assertion.asSecondFactor ? { authMethod: 'password', secondFactor: 'passkey', passkeyId: assertion.passkey.id } : { authMethod: 'passkey', passkeyId: assertion.passkey.id };
        return signIn(services, request, assertion.user, 200, details);
      },
    }),
  ];
}

function routeCreated<T>(body: T) {
  return routeResult({ status: 201, body });
}
