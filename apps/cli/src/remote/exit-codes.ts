import { HoldfastApiError, HoldfastNetworkError, type ExecutionStatus } from '@holdfast/client';
import { ConfigFileError } from './config-store.js';

/** Exit codes of the remote commands (documented in the README and `holdfast --help`). */
export const EXIT = {
  success: 0,
  error: 1,
  partial: 2,
  failed: 3,
  cancelled: 4,
  usage: 10,
  auth: 11,
  notFound: 12,
  network: 13,
} as const;

/** A final execution status as an exit code: scripts can tell a partial run from a failed one. */
export function exitCodeOfStatus(status: ExecutionStatus): number {
  switch (status) {
    case 'Success':
      return EXIT.success;
    case 'Partial':
      return EXIT.partial;
    case 'Failed':
      return EXIT.failed;
    case 'Cancelled':
      return EXIT.cancelled;
    default:
      return EXIT.error;
  }
}

/** A problem with how the CLI was called or configured (no server URL, no credential, bad option value). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** An error that already carries its exit code and one-line message. */
export class ExitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** One line for stderr and the exit code, for any error a command may throw (never a stack trace). */
export function describeFailure(error: unknown): { message: string; exitCode: number } {
  if (error instanceof ExitError) return { message: error.message, exitCode: error.exitCode };
  if (error instanceof UsageError || error instanceof ConfigFileError) return { message: error.message, exitCode: EXIT.usage };
  if (error instanceof HoldfastNetworkError) {
    return { message: `${error.message} (check the URL given to holdfast login or HOLDFAST_URL)`, exitCode: EXIT.network };
  }
  if (error instanceof HoldfastApiError) {
    const what = error.serverMessage ?? `HTTP ${error.status}`;
    if (error.status === 401) return { message: `not authenticated (${what}): check the API key or run holdfast login`, exitCode: EXIT.auth };
    if (error.status === 403) return { message: `not allowed (${what}): the key or user lacks the permission`, exitCode: EXIT.auth };
    if (error.status === 404) return { message: `not found: ${what} (${error.method} ${error.path})`, exitCode: EXIT.notFound };
    if (error.status === 400 || error.status === 409) return { message: `refused: ${what}`, exitCode: EXIT.usage };
    return { message: `server answered ${error.status}: ${what}`, exitCode: EXIT.error };
  }
  return { message: error instanceof Error ? error.message : String(error), exitCode: EXIT.error };
}
