import { Secret, TOTP } from 'otpauth';

/** RFC 6238 parameters every authenticator app understands: SHA-1, 6 digits, 30-second steps. */
export const TOTP_PERIOD_SECONDS = 30;
const TOTP_DIGITS = 6;
const ISSUER = 'Holdfast';
/** Codes of the previous and the next step are accepted too (clock drift of up to 30 s either way). */
const WINDOW_STEPS = 1;

/** A new random TOTP secret (160 bits, the RFC 4226 recommendation) as base32. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totpOf(secretBase32: string, label = ''): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label,
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
    secret: Secret.fromBase32(secretBase32),
  });
}

/** The `otpauth://totp/...` URI an authenticator app scans as a QR code. */
export function otpauthUri(secretBase32: string, accountName: string): string {
  return totpOf(secretBase32, accountName).toString();
}

/** The manual-entry form of the secret: base32 in groups of four, as apps display it. */
export function manualKeyOf(secretBase32: string): string {
  return secretBase32.replace(/(.{4})(?=.)/g, '$1 ');
}

/**
 * The time step a 6-digit code belongs to within one step of `now`, or null when it matches none. The caller
 * compares the step with the last one used, so a code is accepted once.
 */
export function matchingStep(secretBase32: string, code: string, now = Date.now()): number | null {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  const delta = totpOf(secretBase32).validate({ token, timestamp: now, window: WINDOW_STEPS });
  if (delta === null) return null;
  return TOTP.counter({ period: TOTP_PERIOD_SECONDS, timestamp: now }) + delta;
}
