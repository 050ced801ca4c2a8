// Bech32 (BIP 173 checksum, without its 90-character limit, as the age format uses it) for age's key strings.
// Written from the BIP 173 description; only what age keys need.

const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const GENERATORS = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

function polymod(values: number[]): number {
  let checksum = 1;
  for (const value of values) {
    const top = checksum >>> 25;
    checksum = ((checksum & 0x1ffffff) << 5) ^ value;
    for (let bit = 0; bit < 5; bit += 1) if ((top >>> bit) & 1) checksum ^= GENERATORS[bit]!;
  }
  return checksum;
}

function expandPrefix(prefix: string): number[] {
  const codes = [...prefix].map((char) => char.charCodeAt(0));
  return [...codes.map((code) => code >>> 5), 0, ...codes.map((code) => code & 31)];
}

/** Regroups bits (8 -> 5 when encoding, 5 -> 8 when decoding); null when the padding is not canonical. */
function regroup(data: ArrayLike<number>, from: number, to: number, pad: boolean): number[] | null {
  let accumulator = 0;
  let bits = 0;
  const out: number[] = [];
  const mask = (1 << to) - 1;
  for (let index = 0; index < data.length; index += 1) {
    accumulator = (accumulator << from) | data[index]!;
    bits += from;
    while (bits >= to) {
      bits -= to;
      out.push((accumulator >>> bits) & mask);
    }
    accumulator &= (1 << bits) - 1;
  }
  if (pad) {
    if (bits > 0) out.push((accumulator << (to - bits)) & mask);
  } else if (bits >= from || accumulator !== 0) {
    return null;
  }
  return out;
}

/** `prefix1...` in lowercase; the caller upper-cases where the format wants it (age secret keys). */
export function bech32Encode(prefix: string, bytes: Uint8Array): string {
  const lower = prefix.toLowerCase();
  const data = regroup(bytes, 8, 5, true)!;
  const checksum = polymod([...expandPrefix(lower), ...data, 0, 0, 0, 0, 0, 0]) ^ 1;
  const tail = Array.from({ length: 6 }, (_, index) => (checksum >>> (5 * (5 - index))) & 31);
  return `${lower}1${[...data, ...tail].map((value) => CHARSET[value]).join('')}`;
}

/** The prefix (lowercase) and bytes of a bech32 string, or null when it is not valid bech32 (mixed case included). */
export function bech32Decode(text: string): { prefix: string; bytes: Buffer } | null {
  if (text !== text.toLowerCase() && text !== text.toUpperCase()) return null;
  const lower = text.toLowerCase();
  const separator = lower.lastIndexOf('1');
  if (separator < 1 || lower.length - separator - 1 < 6) return null;
  const prefix = lower.slice(0, separator);
  const values: number[] = [];
  for (const char of lower.slice(separator + 1)) {
    const value = CHARSET.indexOf(char);
    if (value < 0) return null;
    values.push(value);
  }
  if (polymod([...expandPrefix(prefix), ...values]) !== 1) return null;
  const bytes = regroup(values.slice(0, -6), 5, 8, false);
  return bytes ? { prefix, bytes: Buffer.from(bytes) } : null;
}
