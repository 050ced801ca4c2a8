/** RFC 4648 base32 (no padding required) to bytes. */
export function base32Decode(text: string): Buffer;

/** The TOTP time step of a moment (default: now). */
export function stepAt(ms?: number): number;

/** HOTP (RFC 4226) of `counter`, which for TOTP is the time step. */
export function totpForStep(secretBase32: string, step: number): string;

/** Waits until at least `marginMs` (default 4000) remain in the current step, so a code computed now is judged in the same step. */
export function awayFromStepBoundary(marginMs?: number): Promise<void>;

/** The `secret` parameter of an otpauth:// URI. */
export function secretOfUri(uri: string): string;
