import { generateKeyPair, type KeyObject } from 'node:crypto';

/** Key algorithms an SSH profile can generate. */
export type SshKeyAlgorithm = 'ed25519' | 'rsa' | 'ecdsa';

/** A generated key pair: the private key as PEM (encrypted when a passphrase is given), the public key as one OpenSSH line. */
export interface GeneratedSshKey {
  privateKey: string;
  publicKey: string;
  algorithm: SshKeyAlgorithm;
}

function sshString(data: Buffer | string): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** An SSH mpint: big-endian, with a leading zero byte when the high bit is set so it stays positive. */
function sshMpint(unsigned: Buffer): Buffer {
  let start = 0;
  while (start < unsigned.length - 1 && unsigned[start] === 0) start++;
  const trimmed = unsigned.subarray(start);
  return sshString((trimmed[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

/** The OpenSSH `authorized_keys` line of a public key (RFC 4253 6.6, RFC 5656, RFC 8709). */
export function openSshPublicKey(publicKey: KeyObject, comment: string): string {
  const jwk = publicKey.export({ format: 'jwk' });
  const b64 = (value: string | undefined) => Buffer.from(value ?? '', 'base64url');
  let type: string;
  let blob: Buffer;
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') {
    type = 'ssh-ed25519';
    blob = Buffer.concat([sshString(type), sshString(b64(jwk.x))]);
  } else if (jwk.kty === 'RSA') {
    type = 'ssh-rsa';
    blob = Buffer.concat([sshString(type), sshMpint(b64(jwk.e)), sshMpint(b64(jwk.n))]);
  } else if (jwk.kty === 'EC' && jwk.crv === 'P-256') {
    type = 'ecdsa-sha2-nistp256';
    const point = Buffer.concat([Buffer.from([4]), b64(jwk.x), b64(jwk.y)]);
    blob = Buffer.concat([sshString(type), sshString('nistp256'), sshString(point)]);
  } else {
    throw new Error(`Unsupported public key type ${String(jwk.kty)}`);
  }
  return `${type} ${blob.toString('base64')}${comment ? ` ${comment.replace(/\s+/g, '_')}` : ''}`;
}

type KeyPair = { publicKey: KeyObject; privateKey: KeyObject };

/** Generates off the event loop: a 4096-bit RSA key takes seconds, which must not stall other requests. */
function generatePair(algorithm: SshKeyAlgorithm): Promise<KeyPair> {
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, publicKey: KeyObject, privateKey: KeyObject) =>
      error ? reject(error) : resolve({ publicKey, privateKey });
    if (algorithm === 'rsa') generateKeyPair('rsa', { modulusLength: 4096, publicExponent: 0x10001 }, done);
    else if (algorithm === 'ecdsa') generateKeyPair('ec', { namedCurve: 'P-256' }, done);
    else generateKeyPair('ed25519', undefined, done);
  });
}

/**
 * Generates an SSH key pair. RSA keys are PKCS#1 PEM and ECDSA keys SEC1 PEM (both read by OpenSSH and ssh2,
 * encrypted with AES-256-CBC when a passphrase is given); Ed25519 keys are PKCS#8 PEM, the only PEM form Node
 * writes for them (OpenSSH reads it through libcrypto).
 */
export async function generateSshKey(
  algorithm: SshKeyAlgorithm,
  passphrase: string | undefined,
  comment: string,
): Promise<GeneratedSshKey> {
  const cipher = passphrase ? { cipher: 'aes-256-cbc', passphrase } : {};
  const pair = await generatePair(algorithm);
  const type = algorithm === 'rsa' ? 'pkcs1' : algorithm === 'ecdsa' ? 'sec1' : 'pkcs8';
  const privateKey = pair.privateKey.export({ type, format: 'pem', ...cipher } as never) as unknown as string;
  return { privateKey, publicKey: openSshPublicKey(pair.publicKey, comment), algorithm };
}
