import { HttpError } from '@holdfast/kernel';

/**
 * A refused sign-in (passkey or single sign-on) that is audited as `login.failed`: the HTTP answer plus what the
 * audit entry records. `reason` is a short code, `userId`/`email` name the account when it is known; never a
 * secret, assertion or token (the message is not audited either: it may quote what the provider sent).
 */
export class SignInFailure extends HttpError {
  // The name stays `HttpError`: the HTTP layer also maps kernel errors by name and status.
  constructor(
    status: number,
    message: string,
    readonly reason: string,
    readonly account: { userId?: string | null; email?: string | null } = {},
  ) {
    super(status, message);
  }
}
