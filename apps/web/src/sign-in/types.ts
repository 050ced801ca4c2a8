/** What a finished sign-in hands back: the CSRF token of the new session. */
export interface SignedIn {
  csrfToken: string;
}

/** The password was right and a second factor is due (`POST /api/auth/sign-in` answered `twoFactorRequired`). */
export interface SecondFactorDue {
  twoFactorRequired: true;
  methods: Array<'totp' | 'backup-code' | 'passkey'>;
  expiresAt: string;
}
