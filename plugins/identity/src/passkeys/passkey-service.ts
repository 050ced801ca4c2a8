import type { OrmDatabase } from '@holdfast/orm-port';
import { SignInFailure } from '../audit/sign-in-failure.js';
import { ConflictError, HttpError, NotFoundError } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/core';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { newId } from '../crypto/tokens.js';
import { PasskeyEntity, type Passkey } from '../entities/second-factor.js';
import { UserEntity, type User } from '../entities/user.js';
import type { OneTimeValues } from '../two-factor/one-time-values.js';
import type { RelyingParty } from './relying-party.js';

// The WebAuthn library (with its CBOR and certificate parsers, about 11 MiB in memory) is loaded by the first ceremony,
// not by every server that never sees a passkey.
const webauthn = () => import('@simplewebauthn/server');

/** How long a ceremony may take between options and answer. */
const CHALLENGE_TTL_MS = 5 * 60 * 1000;

/** What a passkey sign-in challenge was issued for: anyone (passwordless) or one user's pending sign-in. */
interface AuthenticationChallenge {
  userId: string | null;
}

/** A verified passkey sign-in: whose it was and which credential answered. */
export interface PasskeyAssertion {
  user: User;
  passkey: Passkey;
  /** The challenge belonged to a password sign-in waiting for its second factor. */
  asSecondFactor: boolean;
}

function parseTransports(value: string | null | undefined): string[] {
  return value ? (JSON.parse(value) as string[]) : [];
}

/** The challenge inside `clientDataJSON` (base64url JSON), used to find the stored ceremony. */
function challengeOf(clientDataJSON: string): string {
  try {
    const data = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    if (typeof data.challenge === 'string' && data.challenge) return data.challenge;
  } catch {
    // Falls through to the 400 below.
  }
  throw new HttpError(400, 'response.clientDataJSON is not base64url JSON with a challenge');
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * WebAuthn passkeys: registration, management, and sign-in either passwordless (discoverable credentials, user
 * verification required) or as the second factor of a password sign-in. Challenges are single-use and expire.
 */
export class PasskeyService {
  constructor(
    private readonly database: OrmDatabase,
    private readonly values: OneTimeValues,
  ) {}

  private em(): EntityManager {
    return this.database.em();
  }

  async list(userId: string): Promise<Passkey[]> {
    return this.em().find(PasskeyEntity, { userId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  }

  async countFor(userId: string): Promise<number> {
    return this.em().count(PasskeyEntity, { userId });
  }

  async registrationOptions(user: User, rp: RelyingParty): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const existing = await this.list(user.id);
    const options = await (await webauthn()).generateRegistrationOptions({
      rpName: rp.name,
      rpID: rp.rpID,
      userName: user.email,
      userDisplayName: user.name,
      userID: new TextEncoder().encode(user.id),
      attestationType: 'none',
      excludeCredentials: existing.map((passkey) => ({ id: passkey.credentialId, transports: parseTransports(passkey.transports) })),
      // Discoverable, so the same passkey also signs in without a password.
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    });
    await this.values.put(`passkey-registration:${user.id}:${options.challenge}`, { userId: user.id }, CHALLENGE_TTL_MS);
    return options;
  }

  async register(user: User, rp: RelyingParty, response: RegistrationResponseJSON, name: string | undefined): Promise<Passkey> {
    const challenge = challengeOf(response.response.clientDataJSON);
    const issued = await this.values.take<{ userId: string }>(`passkey-registration:${user.id}:${challenge}`);
    if (!issued) throw new HttpError(400, 'The registration challenge is unknown, used or expired; request new options');
    let verification;
    try {
      verification = await (await webauthn()).verifyRegistrationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpID,
        requireUserVerification: false,
      });
    } catch (error) {
      throw new HttpError(400, `Passkey registration was not accepted: ${reason(error)}`);
    }
    if (!verification.verified) throw new HttpError(400, 'Passkey registration was not accepted');
    const info = verification.registrationInfo;
    const em = this.em();
    if (await em.findOne(PasskeyEntity, { credentialId: info.credential.id })) throw new ConflictError('This passkey is already registered');
    const passkey = em.create(PasskeyEntity, {
      id: newId(),
      userId: user.id,
      name: name ?? null,
      credentialId: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      counter: info.credential.counter,
      deviceType: info.credentialDeviceType,
      backedUp: info.credentialBackedUp,
      transports: JSON.stringify(info.credential.transports ?? response.response.transports ?? []),
      aaguid: info.aaguid,
      createdAt: new Date(),
    });
    await em.flush();
    return passkey;
  }

  async rename(userId: string, id: string, name: string): Promise<Passkey> {
    const em = this.em();
    const passkey = await em.findOne(PasskeyEntity, { id, userId });
    if (!passkey) throw new NotFoundError('Passkey not found');
    passkey.name = name;
    await em.flush();
    return passkey;
  }

  /** Deletes a passkey; removing the last one also turns passkey two-factor off, so nobody is locked out. */
  async remove(userId: string, id: string): Promise<void> {
    const deleted = await this.em().nativeDelete(PasskeyEntity, { id, userId });
    if (deleted === 0) throw new NotFoundError('Passkey not found');
    if ((await this.countFor(userId)) === 0) await this.em().nativeUpdate(UserEntity, { id: userId }, { passkeyTwoFactor: false, updatedAt: new Date() });
  }

  /** Whether a password sign-in of this user must be finished with a passkey. */
  async setTwoFactor(userId: string, enabled: boolean): Promise<void> {
    if (enabled && (await this.countFor(userId)) === 0) throw new ConflictError('Register a passkey before requiring one at sign-in');
    await this.em().nativeUpdate(UserEntity, { id: userId }, { passkeyTwoFactor: enabled, updatedAt: new Date() });
  }

  /** Sign-in options: any discoverable passkey, or, for a pending password sign-in, only that user's passkeys. */
  async authenticationOptions(rp: RelyingParty, forUserId: string | null): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const allow = forUserId ? await this.list(forUserId) : [];
    if (forUserId && allow.length === 0) throw new ConflictError('This account has no passkey');
    const options = await (await webauthn()).generateAuthenticationOptions({
      rpID: rp.rpID,
      allowCredentials: allow.map((passkey) => ({ id: passkey.credentialId, transports: parseTransports(passkey.transports) })),
      userVerification: forUserId ? 'preferred' : 'required',
    });
    const challenge: AuthenticationChallenge = { userId: forUserId };
    await this.values.put(`passkey-authentication:${options.challenge}`, { ...challenge }, CHALLENGE_TTL_MS);
    return options;
  }

  /**
   * Verifies a sign-in assertion against its stored challenge and credential: origin, RP ID, signature, and a
   * signature counter that must move forward (a cloned authenticator shows up as a counter going back). A
   * passwordless sign-in needs user verification (the passkey is both factors); a second factor needs presence.
   */
  async authenticate(rp: RelyingParty, response: AuthenticationResponseJSON): Promise<PasskeyAssertion> {
    const challenge = challengeOf(response.response.clientDataJSON);
    const issued = await this.values.take<AuthenticationChallenge>(`passkey-authentication:${challenge}`);
    if (!issued) throw new SignInFailure(401, 'The passkey challenge is unknown, used or expired; request new options', 'passkey-challenge-expired');
    const em = this.em();
    const passkey = await em.findOne(PasskeyEntity, { credentialId: response.id });
    if (!passkey) throw new SignInFailure(401, 'This passkey is not registered', 'passkey-unknown', { userId: issued.userId });
    if (issued.userId && passkey.userId !== issued.userId) throw new SignInFailure(401, 'This passkey belongs to another account', 'passkey-wrong-account', { userId: issued.userId });
    const userHandle = response.response.userHandle;
    if (userHandle && Buffer.from(userHandle, 'base64url').toString('utf8') !== passkey.userId) {
      throw new SignInFailure(401, 'The passkey answered for another account', 'passkey-wrong-account', { userId: passkey.userId });
    }
    let verification;
    try {
      verification = await (await webauthn()).verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpID,
        credential: { id: passkey.credentialId, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: passkey.counter, transports: parseTransports(passkey.transports) },
        requireUserVerification: issued.userId === null,
      });
    } catch (error) {
      throw new SignInFailure(401, `Passkey sign-in was not accepted: ${reason(error)}`, 'passkey-verification-failed', { userId: passkey.userId });
    }
    if (!verification.verified) throw new SignInFailure(401, 'Passkey sign-in was not accepted', 'passkey-verification-failed', { userId: passkey.userId });
    const info = verification.authenticationInfo;
    // Conditional on the counter read above, so two racing requests cannot both move it.
    const updated = await em.nativeUpdate(PasskeyEntity, { id: passkey.id, counter: passkey.counter }, { counter: info.newCounter, backedUp: info.credentialBackedUp, deviceType: info.credentialDeviceType });
    if (updated === 0) throw new SignInFailure(401, 'Passkey sign-in was not accepted: the credential was used concurrently', 'passkey-verification-failed', { userId: passkey.userId });
    const user = await em.findOne(UserEntity, { id: passkey.userId });
    if (!user) throw new SignInFailure(401, 'The account of this passkey no longer exists', 'passkey-unknown');
    return { user, passkey, asSecondFactor: issued.userId !== null };
  }
}
