import { AdapterError, type AdapterErrorCode } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const SMB_ORIGIN = { kind: 'storage', id: 'smb' } as const;

/** An NT status smbclient printed, with the line that names it (paths, never credentials). */
export interface SmbStatus {
  status: string;
  line: string;
}

const AUTH_STATUSES = new Set([
  'NT_STATUS_LOGON_FAILURE',
  'NT_STATUS_WRONG_PASSWORD',
  'NT_STATUS_NO_SUCH_USER',
  'NT_STATUS_ACCOUNT_DISABLED',
  'NT_STATUS_ACCOUNT_LOCKED_OUT',
  'NT_STATUS_ACCOUNT_RESTRICTION',
  'NT_STATUS_PASSWORD_EXPIRED',
  'NT_STATUS_PASSWORD_MUST_CHANGE',
  'NT_STATUS_ACCESS_DENIED',
  'NT_STATUS_MEDIA_WRITE_PROTECTED',
  'NT_STATUS_NETWORK_ACCESS_DENIED',
]);

/** Statuses that mean "no such file or folder". */
export const MISSING_STATUSES = new Set([
  'NT_STATUS_OBJECT_NAME_NOT_FOUND',
  'NT_STATUS_OBJECT_PATH_NOT_FOUND',
  'NT_STATUS_NO_SUCH_FILE',
  'NT_STATUS_NOT_FOUND',
]);

const HINTS: Record<string, string> = {
  NT_STATUS_LOGON_FAILURE: 'wrong username or password',
  NT_STATUS_BAD_NETWORK_NAME: 'the share does not exist on this server',
  NT_STATUS_CONNECTION_REFUSED: 'nothing answers SMB on this host and port',
  NT_STATUS_ACCESS_DENIED: 'the login may not do this here',
  NT_STATUS_DISK_FULL: 'the share is full',
};

function codeOf(status: string): AdapterErrorCode {
  if (AUTH_STATUSES.has(status)) return 'AUTH';
  if (status === 'NT_STATUS_BAD_NETWORK_NAME' || MISSING_STATUSES.has(status)) return 'NOT_FOUND';
  if (status === 'NT_STATUS_OBJECT_NAME_INVALID' || status === 'NT_STATUS_INVALID_PARAMETER') return 'CONFIG';
  // Refused or lost connections, timeouts, a full disk, sharing violations: retry later.
  return 'TRANSIENT';
}

/** The AdapterError of an NT status smbclient reported; `what` names the failed operation. */
export function statusError(status: SmbStatus, what: string): AdapterError {
  const hint = HINTS[status.status] ? ` (${HINTS[status.status]})` : '';
  return new AdapterError(SMB_ORIGIN, codeOf(status.status), `${what}: ${status.line}${hint}`);
}

/** Maps any error to an AdapterError; `what` names the failed operation. */
export function toAdapterError(error: unknown, what: string): AdapterError {
  if (error instanceof AdapterError) return error;
  const raw = error as { name?: string; code?: unknown; message?: string } | null;
  if (raw?.name === 'AbortError' || raw?.code === 'ABORT_ERR') return new AdapterError(SMB_ORIGIN, 'ABORTED', `${what} was aborted`, { cause: error });
  return new AdapterError(SMB_ORIGIN, 'TRANSIENT', `${what}: ${raw?.message ?? String(error)}`, { cause: error });
}

/** The error of a missing object. */
export function notFound(key: string): AdapterError {
  return new AdapterError(SMB_ORIGIN, 'NOT_FOUND', `object "${key}" does not exist`);
}
