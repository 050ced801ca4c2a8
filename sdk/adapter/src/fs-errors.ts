import { AdapterError, type AdapterErrorCode, type AdapterErrorOrigin } from '@holdfast/kernel/adapter';

const CODE_BY_ERRNO: Record<string, AdapterErrorCode> = {
  ENOENT: 'NOT_FOUND',
  ENOTDIR: 'NOT_FOUND',
  EACCES: 'AUTH',
  EPERM: 'AUTH',
  ABORT_ERR: 'ABORTED',
};

/**
 * Wraps a Node file-system error as an `AdapterError` with a stable code (missing -> `NOT_FOUND`, permission ->
 * `AUTH`, abort -> `ABORTED`, anything else `TRANSIENT`); `what` says which operation failed. AdapterErrors pass through.
 */
export function fromFileSystemError(origin: AdapterErrorOrigin, error: unknown, what: string): AdapterError {
  if (error instanceof AdapterError) return error;
  const errno = (error as { code?: string } | null)?.code ?? '';
  const name = (error as { name?: string } | null)?.name;
  const code = name === 'AbortError' ? 'ABORTED' : (CODE_BY_ERRNO[errno] ?? 'TRANSIENT');
  const reason = (error as Error | null)?.message ?? String(error);
  return new AdapterError(origin, code, `${what}: ${reason}`, { cause: error });
}
