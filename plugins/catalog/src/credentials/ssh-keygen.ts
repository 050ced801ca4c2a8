
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
  return new Promise((resolve, reject) => {
    ssh2.utils.generateKeyPair(algorithm, options, (error, keys) => {
      if (error) return reject(error);
      resolve({ privateKey: keys.private, publicKey: keys.public.trim(), algorithm });
    });
  });
}
