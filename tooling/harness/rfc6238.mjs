// An independent RFC 6238 TOTP generator (HMAC-SHA1, 6 digits, 30 s) on node:crypto only, so the tests do not
// check the server's otpauth library against itself. Test-only: shared by the identity plugin's two-factor tests and
// the web e2e.
import { createHmac } from 'node:crypto';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 (no padding required) to bytes. */
export function base32Decode(text) {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out = [];
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new Error(`not base32: ${char}`);
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** The TOTP time step of a moment. */
export function stepAt(ms = Date.now()) {
  return Math.floor(ms / 1000 / 30);
}

/** HOTP (RFC 4226) of `counter`, which for TOTP is the time step. */
export function totpForStep(secretBase32, step) {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', base32Decode(secretBase32)).update(counter).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 1_000_000).padStart(6, '0');
}

/** Waits until at least `marginMs` remain in the current step, so a code computed now is judged in the same step. */
export async function awayFromStepBoundary(marginMs = 4000) {
  const remaining = 30_000 - (Date.now() % 30_000);
  if (remaining < marginMs) await new Promise((resolve) => setTimeout(resolve, remaining + 50));
}

/** The `secret` parameter of an otpauth:// URI. */
export function secretOfUri(uri) {
  const secret = new URL(uri).searchParams.get('secret');
  if (!secret) throw new Error(`no secret in ${uri}`);
  return secret;
}
