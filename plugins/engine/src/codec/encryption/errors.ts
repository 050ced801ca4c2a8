/** Why a decryption stopped; stable, so callers branch on it rather than on the message. */
export type DecryptErrorCode =
  | 'NOT_ENCRYPTED'
  | 'UNSUPPORTED_VERSION'
  | 'CORRUPT_HEADER'
  | 'WRONG_KEY'
  | 'TRUNCATED'
  | 'TRAILING_DATA'
  | 'AUTH_FAILED';

/** A backup that cannot be decrypted. Messages follow docs/formats/encryption.md and never contain key material. */
export class DecryptError extends Error {
  override readonly name = 'DecryptError';
  readonly code: DecryptErrorCode;

  constructor(code: DecryptErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** Identity by shape, so the check survives duplicated package copies. */
export function isDecryptError(error: unknown): error is DecryptError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { name?: unknown }).name === 'DecryptError' &&
    typeof (error as { code?: unknown }).code === 'string'
  );
}
