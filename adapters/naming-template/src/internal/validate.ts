import { parsePattern, type Segment } from './pattern.js';
import { unsafeCharactersIn } from './safe-name.js';

/** Longest pattern accepted; leaves room for values, suffixes and extensions within a 255-byte file name. */
export const MAX_PATTERN_LENGTH = 200;

function describeCharacters(characters: string[]): string {
  return characters.map((c) => (/[\p{Cc}\p{Cs}\u2028\u2029\u202A-\u202E\u2066-\u2069\uFEFF]/u.test(c) ? `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}` : `"${c}"`)).join(', ');
}

/** Checks a pattern before it is saved; `render` refuses exactly the patterns this rejects. */
export function checkPattern(pattern: unknown): { ok: true; segments: Segment[] } | { ok: false; message: string } {
  if (typeof pattern !== 'string' || pattern.trim() === '') return { ok: false, message: 'pattern is empty' };
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return { ok: false, message: `pattern is ${pattern.length} characters long; the limit is ${MAX_PATTERN_LENGTH}` };
  }
  const separators = ['/', '\\'].filter((separator) => pattern.includes(separator));
  if (separators.length > 0) {
    return { ok: false, message: `pattern contains a path separator (${describeCharacters(separators)}); a name is one file, not a path` };
  }
  const unsafe = unsafeCharactersIn(pattern);
  if (unsafe.length > 0) {
    return { ok: false, message: `pattern contains characters not allowed in file names: ${describeCharacters(unsafe)} (use "-" or "_" instead)` };
  }
  const parsed = parsePattern(pattern);
  if (!parsed.ok) return { ok: false, message: `pattern is malformed: ${parsed.message}` };
  const varies = parsed.segments.some((s) => s.kind === 'date' || (s.kind === 'field' && s.name === 'chain'));
  if (!varies) {
    return {
      ok: false,
      message: 'pattern has no date token (yyyy, yy, MMM, MM, dd, HH, mm, ss, SSS) and no {chain}, so every run would get the same name',
    };
  }
  return { ok: true, segments: parsed.segments };
}
