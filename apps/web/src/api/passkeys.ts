import {
  browserSupportsWebAuthn,
  startAuthentication,
  startRegistration,
  WebAuthnError,
  type PublicKeyCredentialCreationOptionsJSON,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/browser';
import type { paths } from '@holdfast/client';
import { api, unwrap } from './client';

/** Whether this browser can run a WebAuthn ceremony at all (insecure origins and old browsers cannot). */
export function passkeysAvailable(): boolean {
  return browserSupportsWebAuthn();
}

/**
 * Words for a ceremony the browser ended. The browser's own messages are about the spec ("The operation either
 * timed out or was not allowed"); the person at the keyboard wants to know what to do next.
 */
export function passkeyErrorMessage(error: unknown): string | undefined {
  const name = error instanceof WebAuthnError ? (error.cause as Error | undefined)?.name : error instanceof Error ? error.name : undefined;
  if (error instanceof WebAuthnError && error.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') return 'This authenticator already holds a passkey for your account.';
  if (error instanceof WebAuthnError && (error.code === 'ERROR_INVALID_DOMAIN' || error.code === 'ERROR_INVALID_RP_ID')) {
    return 'Passkeys need the server to be opened by its host name (not an IP address) over HTTPS or on localhost.';
  }
  if (name === 'NotAllowedError' || name === 'AbortError') return 'The passkey prompt was cancelled or timed out. Try again.';
  return undefined;
}

type JsonBody<P extends keyof paths> = paths[P]['post'] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type RegistrationJson = JsonBody<'/api/auth/passkeys'>['response'];
type AssertionJson = JsonBody<'/api/auth/passkeys/sign-in'>['response'];

/**
 * The credential's toJSON() form as the API schema types it. The browser library types its fields as closed DOM
 * interfaces while the API accepts open JSON objects (fields it does not read pass through), so the same value
 * only needs its type widened.
 */
function asJson<T>(response: RegistrationResponseJSON | AuthenticationResponseJSON): T {
  return response as unknown as T;
}

/** Registers a passkey of this browser's authenticator on the signed-in account (options, create(), verify). */
export async function registerPasskey(name: string | undefined) {
  const options = await unwrap(api.POST('/api/auth/passkeys/registration-options', { body: {} }));
  const response = await startRegistration({ optionsJSON: options as unknown as PublicKeyCredentialCreationOptionsJSON });
  return unwrap(api.POST('/api/auth/passkeys', { body: { ...(name ? { name } : {}), response: asJson<RegistrationJson>(response) } }));
}

/**
 * Signs in with a passkey. Without a pending password sign-in this is passwordless (any discoverable passkey);
 * with one, the server narrows the challenge to that account's passkeys and it is the second factor.
 */
export async function signInWithPasskey() {
  const options = await unwrap(api.POST('/api/auth/passkeys/sign-in/options', { body: {} }));
  const response = await startAuthentication({ optionsJSON: options as unknown as PublicKeyCredentialRequestOptionsJSON });
  return unwrap(api.POST('/api/auth/passkeys/sign-in', { body: { response: asJson<AssertionJson>(response) } }));
}

/** Confirms a protected action with one of the signed-in user's passkeys (issue 45.4 step-up). */
export async function stepUpWithPasskey() {
  const options = await unwrap(api.POST('/api/auth/step-up/passkey-options', { body: {} }));
  const response = await startAuthentication({ optionsJSON: options as unknown as PublicKeyCredentialRequestOptionsJSON });
  return unwrap(api.POST('/api/auth/step-up', { body: { passkey: asJson<AssertionJson>(response) } }));
}
