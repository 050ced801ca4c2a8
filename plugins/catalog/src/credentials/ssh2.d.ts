// The part of ssh2's API the catalog uses (its @types package pins old Node typings, so we declare our own).
declare module 'ssh2' {
  export interface GeneratedKeyPair {
    /** OpenSSH private key (`-----BEGIN OPENSSH PRIVATE KEY-----`), bcrypt-encrypted when a passphrase is given. */
    private: string;
    /** One `authorized_keys` line. */
    public: string;
  }
  export interface KeyPairOptions {
    bits?: number;
    comment?: string;
    passphrase?: string;
    cipher?: string;
    rounds?: number;
  }
  export const utils: {
    generateKeyPair(
      type: 'ed25519' | 'ecdsa' | 'rsa',
      options: KeyPairOptions,
      callback: (error: Error | null, keys: GeneratedKeyPair) => void,
    ): void;
    parseKey(data: string, passphrase?: string): { type: string } | Error;
  };
}
