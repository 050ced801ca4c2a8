import { AdapterError, type AdapterErrorCode } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const LOCAL_ORIGIN = { kind: 'storage', id: 'local' } as const;

const CODE_BY_ERRNO: Record<string, AdapterErrorCode> = {
  ENOENT: 'NOT_FOUND',
  ENOTDIR: 'NOT_FOUND',
  EACCES: 'AUTH',
  EPERM: 'AUTH',
  ABORT_ERR: 'ABORTED',
};

/** Wraps a file-system error as an AdapterError with a stable code; `what` says which operation failed. */
export function toAdapterError(error: unknown, what: string): AdapterError {
  const errno = (error as { code?: string } | null)?.code ?? '';
  const name = (error as { name?: string } | null)?.name;
  const code = name === 'AbortError' ? 'ABORTED' : (CODE_BY_ERRNO[errno] ?? 'TRANSIENT');
  const reason = (error as Error | null)?.message ?? String(error);
  return new AdapterError(LOCAL_ORIGIN, code, `${what}: ${reason}`, { cause: error });
}

/** The error of a missing object. */
export function notFound(key: string): AdapterError {
  return new AdapterError(LOCAL_ORIGIN, 'NOT_FOUND', `object "${key}" does not exist`);
}
