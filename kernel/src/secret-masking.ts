/** What a masked secret reads as in a message. */
export const SECRET_MASK = '***';

/**
 * Secrets at least this long are masked wherever they occur, inside a longer word too. Shorter ones are masked only
 * as whole tokens: a one-letter password `e` replaced inside words turned "Access denied" into "Acc***ss d***ni***d".
 */
export const MIN_EMBEDDED_SECRET_LENGTH = 8;

const WORD_CHARACTER = /[\p{L}\p{N}_]/u;

function isWordCharacter(character: string | undefined): boolean {
  return character !== undefined && WORD_CHARACTER.test(character);
}

/**
 * True when the occurrence of `secret` at `index` stands alone: a letter, digit or underscore at its edge is not
 * continued by another one (the `\b` rule, Unicode-aware). A secret edge that is punctuation needs no boundary.
 */
function isWholeToken(text: string, index: number, secret: string): boolean {
  const before = text[index - 1];
  const after = text[index + secret.length];
  if (isWordCharacter(secret[0]) && isWordCharacter(before)) return false;
  if (isWordCharacter(secret[secret.length - 1]) && isWordCharacter(after)) return false;
  return true;
}

function maskWholeTokens(text: string, secret: string): string {
  let out = '';
  let from = 0;
  for (let index = text.indexOf(secret); index !== -1; index = text.indexOf(secret, index + 1)) {
    if (index < from || !isWholeToken(text, index, secret)) continue;
    out += text.slice(from, index) + SECRET_MASK;
    from = index + secret.length;
  }
  return out + text.slice(from);
}

/**
 * Removes secrets from a message without destroying its words: a secret of {@link MIN_EMBEDDED_SECRET_LENGTH} or
 * more characters is replaced everywhere; a shorter one only where it stands as a whole token (so it is never echoed
 * on its own, and "denied" stays readable when the password is `e`). Longer secrets are masked first, so one secret
 * containing another is masked whole.
 */
export function maskSecrets(text: string, secrets: Iterable<string | null | undefined>): string {
  const distinct = [...new Set([...secrets].filter((value): value is string => typeof value === 'string' && value.length > 0))];
  distinct.sort((a, b) => b.length - a.length);
  let result = text;
  for (const secret of distinct) {
    result = secret.length >= MIN_EMBEDDED_SECRET_LENGTH ? result.split(secret).join(SECRET_MASK) : maskWholeTokens(result, secret);
  }
  return result;
}
