import { AdapterError, type AdapterErrorCode } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const SFTP_ORIGIN = { kind: 'storage', id: 'sftp' } as const;

/** SFTP status codes (draft-ietf-secsh-filexfer-02) that ssh2 puts on `error.code`. */
const SFTP_NO_SUCH_FILE = 2;
const SFTP_PERMISSION_DENIED = 3;

const CODE_BY_NAME: Record<string, AdapterErrorCode> = {
  ENOENT: 'NOT_FOUND',
  ECONNREFUSED: 'TRANSIENT',
  ECONNRESET: 'TRANSIENT',
  ETIMEDOUT: 'TRANSIENT',
  EHOSTUNREACH: 'TRANSIENT',
  ENOTFOUND: 'TRANSIENT',
  EAI_AGAIN: 'TRANSIENT',
  ABORT_ERR: 'ABORTED',
};

/** True when an SFTP request failed because the path does not exist. */
export function isNoSuchFile(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === SFTP_NO_SUCH_FILE || code === 'ENOENT';
}

/** Maps an ssh2/SFTP/socket error to an AdapterError with a stable code; `what` names the failed operation. */
export function toAdapterError(error: unknown, what: string): AdapterError {
  if (error instanceof AdapterError) return error;
  const raw = error as { code?: unknown; name?: string; level?: string; message?: string } | null;
  let code: AdapterErrorCode = 'TRANSIENT';
  if (raw?.name === 'AbortError') code = 'ABORTED';
  else if (raw?.level === 'client-authentication') code = 'AUTH';
  else if (raw?.code === SFTP_NO_SUCH_FILE) code = 'NOT_FOUND';
  else if (raw?.code === SFTP_PERMISSION_DENIED) code = 'AUTH';
  else if (typeof raw?.code === 'string') code = CODE_BY_NAME[raw.code] ?? 'TRANSIENT';
  // ssh2 messages carry no secrets (it never echoes passwords or keys), so they can be passed on.
  const reason = raw?.message ?? String(error);
  return new AdapterError(SFTP_ORIGIN, code, `${what}: ${reason}`, { cause: error });
}

/** The error of a missing object. */
export function notFound(key: string): AdapterError {
  return new AdapterError(SFTP_ORIGIN, 'NOT_FOUND', `object "${key}" does not exist`);
}

/** The error of an aborted operation. */
export function aborted(what: string): AdapterError {
  return new AdapterError(SFTP_ORIGIN, 'ABORTED', `${what} was aborted`);
}
