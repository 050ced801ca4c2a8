import { AdapterError, type AdapterErrorCode } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const RSYNC_ORIGIN = { kind: 'storage', id: 'rsync' } as const;

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

/** rsync's exit code 5: error starting the client-server protocol (auth failed, unknown module). */
const RSYNC_PROTOCOL_START = 5;

/** Maps a rsync stderr line to a code. */
const PATTERNS: [RegExp, AdapterErrorCode][] = [
  [/auth failed|@ERROR: auth|access denied|permission denied|password/i, 'AUTH'],
  [/Unknown module|unknown option|syntax or usage/i, 'CONFIG'],
  [/No such file or directory|change_dir .* failed|link_stat .* failed/i, 'NOT_FOUND'],
];

/** The meaningful line of rsync's stderr (its last error), without the trailing code summary. */
export function rsyncReason(stderr: string): string {
  const lines = stderr.split('\n').map((line) => line.trim()).filter(Boolean);
  const specific = lines.find((line) => /^@ERROR|^rsync: |^ERROR/.test(line) && !/^rsync error: /.test(line));
  return (specific ?? lines.at(-1) ?? 'no error output').slice(0, 500);
}

/** Maps a failed rsync run (exit code and stderr) to an AdapterError. rsync never prints RSYNC_PASSWORD. */
export function rsyncError(code: number | null, stderr: string, what: string, tool = 'rsync'): AdapterError {
  const reason = rsyncReason(stderr);
  let mapped: AdapterErrorCode = PATTERNS.find(([pattern]) => pattern.test(reason))?.[1] ?? 'TRANSIENT';
  if (code === RSYNC_PROTOCOL_START && mapped === 'TRANSIENT') mapped = 'CONFIG';
  return new AdapterError(RSYNC_ORIGIN, mapped, `${what}: ${tool} exit code ${code ?? 'none (killed)'}: ${reason}`);
}

/** Maps an ssh2/socket error to an AdapterError; `what` names the failed operation. */
export function toAdapterError(error: unknown, what: string): AdapterError {
  if (error instanceof AdapterError) return error;
  const raw = error as { code?: unknown; name?: string; level?: string; message?: string } | null;
  let code: AdapterErrorCode = 'TRANSIENT';
  if (raw?.name === 'AbortError') code = 'ABORTED';
  else if (raw?.level === 'client-authentication') code = 'AUTH';
  else if (typeof raw?.code === 'string') code = CODE_BY_NAME[raw.code] ?? 'TRANSIENT';
  // ssh2 messages carry no secrets (it never echoes passwords or keys).
  return new AdapterError(RSYNC_ORIGIN, code, `${what}: ${raw?.message ?? String(error)}`);
}

/** The error of a missing object. */
export function notFound(key: string): AdapterError {
  return new AdapterError(RSYNC_ORIGIN, 'NOT_FOUND', `object "${key}" does not exist`);
}

/** The error of an aborted operation. */
export function aborted(what: string): AdapterError {
  return new AdapterError(RSYNC_ORIGIN, 'ABORTED', `${what} was aborted`);
}
