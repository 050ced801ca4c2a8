import type { Readable } from 'node:stream';
import { AdapterError, fromFileSystemError, ReplaceRefusedError } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const DIRECTORY_ORIGIN = { kind: 'source', id: 'directory' } as const;

/** Wraps a file-system error as an AdapterError with a stable code; `what` says which operation failed. */
export function toAdapterError(error: unknown, what: string): AdapterError {
  return fromFileSystemError(DIRECTORY_ORIGIN, error, what);
}

/** The error of an aborted dump or restore. */
export function aborted(what: string): AdapterError {
  return new AdapterError(DIRECTORY_ORIGIN, 'ABORTED', `${what} was aborted`);
}

/** The errno code of a file-system error, or `''`. */
export function errnoOf(error: unknown): string {
  return (error as { code?: string } | null)?.code ?? '';
}

/** Why a file or folder was skipped, in the words of a warning: vanished, permission denied, or the error's message. */
export function describeFileError(error: unknown): string {
  const code = errnoOf(error);
  if (code === 'ENOENT') return 'it vanished while the backup ran';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return (error as Error).message;
}

/**
 * Ends a restore's input with the failure, so whoever feeds it (the engine's download pipeline, which listens for its
 * errors) stops with the same cause instead of waiting on a stream nobody reads. The error is not rethrown here: a
 * caller that handed over a bare stream has no listener, and the restore's own rejection reports it.
 */
export function abandonInput(input: Readable, error: unknown): void {
  input.on('error', () => undefined);
  input.destroy(error instanceof Error ? error : new Error(String(error)));
}

/**
 * Rethrows a commit refused by `refuseReplacing` (a restore without overwrite that found a file in the way when it
 * moved its staged tree into place) as a CONFIG error saying what to send; any other error as it is.
 */
export function refusedReplacing(error: unknown): never {
  if (!(error instanceof ReplaceRefusedError)) throw error;
  throw new AdapterError(
    DIRECTORY_ORIGIN,
    'CONFIG',
    `"${error.path}" exists now and the restore would replace it, which the restore request did not allow: nothing was changed. Send "overwrite": true to replace files of the same name, or restore into an empty or new folder`,
    { cause: error },
  );
}
