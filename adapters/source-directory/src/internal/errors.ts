import { AdapterError, type AdapterErrorCode } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const DIRECTORY_ORIGIN = { kind: 'source', id: 'directory' } as const;

const CODE_BY_ERRNO: Record<string, AdapterErrorCode> = {
  ENOENT: 'NOT_FOUND',
  ENOTDIR: 'NOT_FOUND',
  EACCES: 'AUTH',
  EPERM: 'AUTH',
  ABORT_ERR: 'ABORTED',
};

/** Wraps a file-system error as an AdapterError with a stable code; `what` says which operation failed. */
export function toAdapterError(error: unknown, what: string): AdapterError {
  if (error instanceof AdapterError) return error;
  const errno = (error as { code?: string } | null)?.code ?? '';
  const name = (error as { name?: string } | null)?.name;
  const code = name === 'AbortError' ? 'ABORTED' : (CODE_BY_ERRNO[errno] ?? 'TRANSIENT');
  return new AdapterError(DIRECTORY_ORIGIN, code, `${what}: ${(error as Error | null)?.message ?? String(error)}`, { cause: error });
}

/** The error of an aborted dump or restore. */
export function aborted(what: string): AdapterError {
  return new AdapterError(DIRECTORY_ORIGIN, 'ABORTED', `${what} was aborted`);
}

/** The errno code of a file-system error, or `''`. */
export function errnoOf(error: unknown): string {
  return (error as { code?: string } | null)?.code ?? '';
}
