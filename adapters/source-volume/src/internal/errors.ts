import { AdapterError, type AdapterErrorCode } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const ORIGIN = { kind: 'source', id: 'volume' } as const;

/** An AdapterError of this adapter. */
export function volumeError(code: AdapterErrorCode, message: string, cause?: unknown): AdapterError {
  return new AdapterError(ORIGIN, code, message, cause === undefined ? undefined : { cause });
}

/** The error of an aborted dump or restore. */
export function aborted(what: string): AdapterError {
  return volumeError('ABORTED', `${what} was aborted`);
}

/** Maps an Engine API status to an error code (https://docs.docker.com/engine/api/v1.43/ lists the statuses). */
export function codeOfStatus(status: number): AdapterErrorCode {
  if (status === 401 || status === 403) return 'AUTH';
  if (status === 404) return 'NOT_FOUND';
  if (status === 400 || status === 409) return 'CONFIG';
  return 'TRANSIENT';
}

/** Why a connection to the Engine failed, without any secret (the endpoint itself is not secret). */
export function connectError(endpoint: string, error: unknown): AdapterError {
  const code = (error as { code?: string } | null)?.code ?? '';
  const reasons: Record<string, string> = {
    ENOENT: 'the socket does not exist (is Docker running, is the socket mounted?)',
    ECONNREFUSED: 'the connection was refused (is the daemon listening there?)',
    EACCES: 'permission denied on the socket (run Holdfast in the docker group or mount the socket readable)',
    ENOTFOUND: 'the host name does not resolve',
    ETIMEDOUT: 'the connection timed out',
    EHOSTUNREACH: 'the host is unreachable',
  };
  const message = (error as Error)?.message ?? String(error);
  const isTls = /TLS|SSL|CERT/i.test(code) || /certificate|handshake|alert/i.test(message);
  // TLS errors name the certificate problem (Node's messages carry no key material).
  const reason = reasons[code] ?? (isTls ? `TLS handshake failed (${code ? `${code}: ` : ''}${message})` : code || message);
  const errorCode = code === 'EACCES' || isTls ? 'AUTH' : code === 'ENOENT' || code === 'ENOTFOUND' ? 'CONFIG' : 'TRANSIENT';
  return volumeError(errorCode, `cannot reach the Docker Engine at ${endpoint}: ${reason}`);
}
