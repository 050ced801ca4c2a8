import { AdapterError, fromFileSystemError } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const LOCAL_ORIGIN = { kind: 'storage', id: 'local' } as const;

/** Wraps a file-system error as an AdapterError with a stable code; `what` says which operation failed. */
export function toAdapterError(error: unknown, what: string): AdapterError {
  return fromFileSystemError(LOCAL_ORIGIN, error, what);
}

/** The error of a missing object. */
export function notFound(key: string): AdapterError {
  return new AdapterError(LOCAL_ORIGIN, 'NOT_FOUND', `object "${key}" does not exist`);
}
