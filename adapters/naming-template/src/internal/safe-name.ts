/**
 * Characters never allowed in a rendered name: path separators, the characters Windows and SMB shares reject,
 * control characters, lone surrogates (not encodable as UTF-8), line/paragraph separators and bidi controls
 * (which can make `exe.txt` display as `txt.exe`).
 */
export const UNSAFE_CHARACTERS = /[/\\<>:"|?*\p{Cc}\p{Cs}\u2028\u2029\u202A-\u202E\u2066-\u2069\uFEFF]/gu;

/** Characters a pattern may not contain literally; `validate` names them. */
export function unsafeCharactersIn(text: string): string[] {
  return [...new Set(text.match(UNSAFE_CHARACTERS) ?? [])];
}

/** Replaces every unsafe character of a substituted value (job, database or chain name). */
export function sanitizeValue(value: string, replacement: string): string {
  return value.normalize('NFC').replace(UNSAFE_CHARACTERS, replacement);
}

/** A rendered piece; only substituted values may be shortened to fit the length limit. */
export interface RenderedPart {
  text: string;
  shrinkable: boolean;
}

const utf8Length = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * Joins the parts into a name of at most `maxBytes` UTF-8 bytes: the longest substituted value loses code points
 * first (the date stays intact, so names stay distinct), then the whole name is cut as a last resort. Leading and
 * trailing dots and spaces are removed (hidden files; Windows drops them) and an empty result becomes `backup`.
 */
export function finishName(parts: RenderedPart[], maxBytes: number): string {
  // A value longer than the whole budget is cut first, which bounds the loop below whatever the input size.
  const pieces = parts.map((part) => {
    const codePoints = Array.from(part.shrinkable ? cutToBytes(part.text, maxBytes) : part.text);
    return { shrinkable: part.shrinkable, codePoints, bytes: utf8Length(codePoints.join('')) };
  });
  let total = pieces.reduce((sum, piece) => sum + piece.bytes, 0);
  while (total > maxBytes) {
    let longest: (typeof pieces)[number] | undefined;
    for (const piece of pieces) {
      if (piece.shrinkable && piece.bytes > 0 && (!longest || piece.bytes > longest.bytes)) longest = piece;
    }
    if (!longest) break;
    const dropped = utf8Length(longest.codePoints.pop()!);
    longest.bytes -= dropped;
    total -= dropped;
  }
  let name = pieces.map((piece) => piece.codePoints.join('')).join('');
  if (utf8Length(name) > maxBytes) name = cutToBytes(name, maxBytes);
  name = name.replace(/^[.\s]+/u, '').replace(/[.\s]+$/u, '');
  return name === '' ? 'backup' : name;
}

function cutToBytes(text: string, maxBytes: number): string {
  let result = '';
  let bytes = 0;
  for (const codePoint of text) {
    bytes += utf8Length(codePoint);
    if (bytes > maxBytes) break;
    result += codePoint;
  }
  return result;
}
