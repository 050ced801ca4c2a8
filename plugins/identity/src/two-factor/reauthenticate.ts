import { HttpError } from '@holdfast/kernel';
import { z } from 'zod';
import type { User } from '../entities/user.js';
import type { IdentityServices } from '../services.js';
import { verifyPassword } from '../users/passwords.js';

/** Proof that the person at the keyboard is the account holder: the password, or a current TOTP code. */
export const reauthenticationBody = z
  .strictObject({
    password: z.string().min(1).max(1024).optional(),
    code: z.string().min(1).max(20).optional().describe('A current code of the authenticator app'),
  })
  .refine((body) => body.password !== undefined || body.code !== undefined, { message: 'Send `password` or a current `code`' })
  .meta({ id: 'Reauthentication' });

/**
 * Checks a re-authentication before a change that weakens or reveals sign-in protection. Wrong proof is a 403
 * (not 401: the session itself is fine). With `DISABLE_EMAIL_LOGIN` the password is not accepted here either.
 */
export async function reauthenticate(services: IdentityServices, user: User, body: z.infer<typeof reauthenticationBody>): Promise<'password' | 'totp'> {
  if (body.password !== undefined) {
    if (services.config.isEmailLoginDisabled) {
      throw new HttpError(403, 'Password checks are disabled on this server (DISABLE_EMAIL_LOGIN); confirm with a current two-factor code');
    }
    const match = await verifyPassword(services.database, user.email, body.password);
    if (match?.id !== user.id) throw new HttpError(403, 'The password is not correct');
    return 'password';
  }
  try {
    await services.twoFactor.verify(user.id, { code: body.code });
  } catch (error) {
    if (error instanceof HttpError && error.status === 401) throw new HttpError(403, error.message);
    throw error;
  }
  return 'totp';
}
