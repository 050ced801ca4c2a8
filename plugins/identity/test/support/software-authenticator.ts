// A software WebAuthn authenticator for the tests: an ES256 (P-256) key from node:crypto, attestation format
// `none`, CBOR from an independent encoder. It answers the JSON options the server hands out exactly as a
// browser's PublicKeyCredential.toJSON() would, so the ceremonies run without a browser.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { encodeCBOR, type CBORType } from '@levischuck/tiny-cbor';

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_BE = 0x08;
const FLAG_BS = 0x10;
const FLAG_AT = 0x40;

const b64url = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

/** Options of a {@link SoftwareAuthenticator}. */
export interface AuthenticatorOptions {
  /** Origin the "browser" reports in client data. */
  origin: string;
  /** Synced passkey (backup eligible and backed up): device type `multiDevice`. */
  backedUp?: boolean;
  transports?: string[];
}

export class SoftwareAuthenticator {
  readonly credentialId = randomBytes(16);
  readonly aaguid = randomBytes(16);
  private readonly privateKey: KeyObject;
  private readonly publicJwk: { x: string; y: string };
  /** Signature counter; tests set it back to simulate a cloned authenticator. */
  counter = 0;
  userHandle: string | undefined;

  constructor(readonly options: AuthenticatorOptions) {
    // Generated as PEM and imported, not used as generated: Node 20 can deadlock when a garbage collection during a
    // JWK export or a signature with a generated KeyObject frees that key's generation job, which locks the key's
    // mutex again (seen as a test hanging forever; tooling/harness/oidc-provider.mjs has the backtrace).
    const pair = generateKeyPairSync('ec', {
      namedCurve: 'P-256',
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    this.privateKey = createPrivateKey(pair.privateKey);
    const jwk = createPublicKey(pair.publicKey).export({ format: 'jwk' }) as { x: string; y: string };
    this.publicJwk = { x: jwk.x, y: jwk.y };
  }

  get id(): string {
    return b64url(this.credentialId);
  }

  private flags(userVerified: boolean, attested: boolean): number {
    let flags = FLAG_UP | (userVerified ? FLAG_UV : 0) | (attested ? FLAG_AT : 0);
    if (this.options.backedUp) flags |= FLAG_BE | FLAG_BS;
    return flags;
  }

  private authData(rpId: string, flags: number, attestedCredential?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(this.counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attestedCredential ? [attestedCredential] : [])]);
  }

  private coseKey(): Uint8Array {
    return encodeCBOR(
      new Map<number, number | Uint8Array>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, Buffer.from(this.publicJwk.x, 'base64url')],
        [-3, Buffer.from(this.publicJwk.y, 'base64url')],
      ]),
    );
  }

  private clientData(type: string, challenge: string, origin = this.options.origin): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** navigator.credentials.create() for the server's creation options. */
  create(options: { challenge: string; rp: { id?: string }; user: { id: string } }, rpId = options.rp.id!) {
    this.userHandle = options.user.id;
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([this.aaguid, idLength, this.credentialId, Buffer.from(this.coseKey())]);
    const authData = this.authData(rpId, this.flags(true, true), attested);
    const attestationObject = encodeCBOR(new Map<string, CBORType>([['fmt', 'none'], ['attStmt', new Map<string, CBORType>()], ['authData', authData]]));
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(this.clientData('webauthn.create', options.challenge)),
        attestationObject: b64url(attestationObject),
        transports: this.options.transports ?? ['internal', 'hybrid'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** navigator.credentials.get() for the server's request options; the counter moves forward first. */
  get(options: { challenge: string; rpId?: string }, overrides: { userVerified?: boolean; origin?: string; rpId?: string } = {}) {
    this.counter += 1;
    const rpId = overrides.rpId ?? options.rpId!;
    const authData = this.authData(rpId, this.flags(overrides.userVerified ?? true, false));
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, overrides.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), this.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...(this.userHandle ? { userHandle: this.userHandle } : {}),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
