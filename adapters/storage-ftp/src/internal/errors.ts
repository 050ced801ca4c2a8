import { AdapterError, type AdapterErrorCode } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const FTP_ORIGIN = { kind: 'storage', id: 'ftp' } as const;

/** The FTP reply code of a failed command (basic-ftp's FTPError), if the error is one. */
export function replyCodeOf(error: unknown): number | undefined {
  const raw = error as { name?: unknown; code?: unknown } | null;
  return raw?.name === 'FTPError' && typeof raw.code === 'number' ? raw.code : undefined;
}

/** 550: "requested action not taken" (no such file, or not allowed: the server does not say which). */
export function isUnavailable(error: unknown): boolean {
  return replyCodeOf(error) === 550;
}

function fromReply(reply: number): AdapterErrorCode {
  if (reply === 530 || reply === 532) return 'AUTH';
  if (reply === 550) return 'NOT_FOUND';
  if (reply === 553) return 'AUTH';
  if (reply >= 400 && reply < 500) return 'TRANSIENT';
  return 'CONFIG';
}

/** Maps a basic-ftp, TLS or socket error to an AdapterError with a stable code; `what` names the failed operation. */
export function toAdapterError(error: unknown, what: string): AdapterError {
  if (error instanceof AdapterError) return error;
  const raw = error as { name?: string; code?: unknown; message?: string } | null;
  const message = raw?.message ?? String(error);
  const reply = replyCodeOf(error);
  // FTP replies and socket errors quote the server and the path, never the password (PASS is not echoed).
  if (reply !== undefined) {
    const hint = reply === 530 ? ' (wrong username or password, or the user may not log in over this connection type)' : '';
    return new AdapterError(FTP_ORIGIN, fromReply(reply), `${what}: server answered ${message}${hint}`, { cause: error });
  }
  if (raw?.name === 'AbortError' || raw?.code === 'ABORT_ERR') return new AdapterError(FTP_ORIGIN, 'ABORTED', `${what} was aborted`, { cause: error });
  if (typeof raw?.code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(raw.code)) {
    return new AdapterError(FTP_ORIGIN, 'CONFIG', `${what}: the server certificate was not accepted (${raw.code}); give its ca or set rejectUnauthorized to false`, { cause: error });
  }
  return new AdapterError(FTP_ORIGIN, 'TRANSIENT', `${what}: ${message}`, { cause: error });
}

/** The error of a missing object. */
export function notFound(key: string): AdapterError {
  return new AdapterError(FTP_ORIGIN, 'NOT_FOUND', `object "${key}" does not exist`);
}

/** The error of an aborted operation. */
export function aborted(what: string): AdapterError {
  return new AdapterError(FTP_ORIGIN, 'ABORTED', `${what} was aborted`);
}
