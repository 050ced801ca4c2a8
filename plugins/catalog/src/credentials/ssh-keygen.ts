import type { GeneratedKeyPair } from 'ssh2';

/** Attempts before giving up; at one bad key in 250, ten in a row do not happen. */
const MAX_ATTEMPTS = 10;

/** Key algorithms an SSH profile can generate. */
export type SshKeyAlgorithm = 'ed25519' | 'rsa' | 'ecdsa';

/** A generated key pair: the private key in OpenSSH format (encrypted when a passphrase is given), the public key as one OpenSSH line. */
export interface GeneratedSshKey {
  privateKey: string;
  publicKey: string;
  algorithm: SshKeyAlgorithm;
}

const BITS: Record<SshKeyAlgorithm, number | undefined> = { ed25519: undefined, ecdsa: 256, rsa: 4096 };

/**
 * Generates an SSH key pair with ssh2's generator, off the event loop (a 4096-bit RSA key takes seconds). The
 * private key is in the OpenSSH format (`openssh-key-v1`), which OpenSSH, ssh2 and every common client read for all
 * three algorithms; with a passphrase it is encrypted with AES-256-CTR and a bcrypt KDF, as `ssh-keygen` does.
 * (Node's own export writes Ed25519 keys only as PKCS#8, which ssh2 cannot load.)
 */
export async function generateSshKey(algorithm: SshKeyAlgorithm, passphrase: string | undefined, comment: string): Promise<GeneratedSshKey> {
  // Loaded here, not at start-up: importing ssh2 allocates a 16 MiB WebAssembly memory.
  const { default: ssh2 } = await import('ssh2');
  const options = {
    ...(BITS[algorithm] ? { bits: BITS[algorithm] } : {}),
    comment: comment.replace(/\s+/g, '_'),
    ...(passphrase ? { passphrase, cipher: 'aes256-ctr', rounds: 16 } : {}),
  };
  // ssh2 (1.17.0) writes about one Ed25519 key in 250 that its own parser then refuses ("Malformed OpenSSH private
  // key": 489 of 124,293 in a run), and the SFTP adapter signs in through that parser. A key is handed out only once
  // it parses; a fresh one is generated otherwise.
  for (let attempt = 1; ; attempt++) {
    const keys = await new Promise<GeneratedKeyPair>((resolve, reject) =>
      ssh2.utils.generateKeyPair(algorithm, options, (error, generated) => (error ? reject(error) : resolve(generated))),
    );
    const parsed = ssh2.utils.parseKey(keys.private, passphrase);
    if (!(parsed instanceof Error)) return { privateKey: keys.private, publicKey: keys.public.trim(), algorithm };
    if (attempt === MAX_ATTEMPTS) throw new Error(`generated ${algorithm} keys could not be read back (${parsed.message}) ${MAX_ATTEMPTS} times`);
  }
}
