import { AdapterError, type AdapterErrorCode } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const ORIGIN = { kind: 'source', id: 'mongodb' } as const;

/** An AdapterError of this adapter. */
export function mongoError(code: AdapterErrorCode, message: string): AdapterError {
  return new AdapterError(ORIGIN, code, message);
}

export function aborted(what: string): AdapterError {
  return mongoError('ABORTED', `${what} was aborted`);
}

/**
 * Maps a driver error to an AdapterError. The driver's messages name hosts, never the password; `scrub` removes the
 * password anyway in case a server echoes it.
 */
export function fromDriverError(error: unknown, what: string, scrub: (text: string) => string): AdapterError {
  if ((error as { name?: string })?.name === 'AdapterError') return error as AdapterError;
  const e = error as { name?: string; code?: number; codeName?: string; message?: string };
  const message = scrub(e?.message ?? String(error));
  if (e?.code === 18 || e?.codeName === 'AuthenticationFailed') return mongoError('AUTH', `${what}: authentication failed (${message})`);
  if (e?.code === 13 || e?.codeName === 'Unauthorized') return mongoError('AUTH', `${what}: not authorized (${message})`);
  if (e?.code === 26 || e?.codeName === 'NamespaceNotFound') return mongoError('NOT_FOUND', `${what}: ${message}`);
  if (e?.name === 'MongoServerSelectionError' || e?.name === 'MongoNetworkError' || e?.name === 'MongoNetworkTimeoutError') {
    return mongoError('TRANSIENT', `${what}: cannot reach the server (${message})`);
  }
  return mongoError('TRANSIENT', `${what}: ${message}`);
}
