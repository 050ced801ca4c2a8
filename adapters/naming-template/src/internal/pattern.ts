/** Placeholders in braces; their values are substituted after the date tokens are resolved. */
export const FIELD_TOKENS = ['job_name', 'db_name', 'chain'] as const;

/** One of {@link FIELD_TOKENS}. */
export type FieldToken = (typeof FIELD_TOKENS)[number];

/** Date tokens, longest first so `yyyy` wins over `yy` and `MMM` over `MM`. */
export const DATE_TOKENS = ['yyyy', 'MMM', 'SSS', 'yy', 'MM', 'dd', 'HH', 'mm', 'ss'] as const;

/** One of {@link DATE_TOKENS}. */
export type DateToken = (typeof DATE_TOKENS)[number];

/** A parsed piece of a pattern. */
export type Segment =
  | { kind: 'literal'; text: string }
  | { kind: 'date'; token: DateToken }
  | { kind: 'field'; name: FieldToken };

/** Outcome of parsing: segments, or the first syntax problem. */
export type ParsedPattern = { ok: true; segments: Segment[] } | { ok: false; message: string };

const KNOWN_FIELDS = FIELD_TOKENS.map((name) => `{${name}}`).join(', ');

/**
 * Splits a pattern into literal text, date tokens and `{field}` placeholders. Text in single quotes is literal
 * (`'daily'` keeps its `d`s), and `''` is a single quote.
 */
export function parsePattern(pattern: string): ParsedPattern {
  const segments: Segment[] = [];
  const literal = (text: string) => {
    const last = segments.at(-1);
    if (last?.kind === 'literal') last.text += text;
    else segments.push({ kind: 'literal', text });
  };
  let i = 0;
  while (i < pattern.length) {
    const char = pattern[i]!;
    if (char === "'") {
      if (pattern[i + 1] === "'") {
        literal("'");
        i += 2;
        continue;
      }
      const quoted = readQuoted(pattern, i);
      if (quoted === undefined) return { ok: false, message: `unterminated quote starting at position ${i + 1}` };
      literal(quoted.text);
      i = quoted.end;
    } else if (char === '{') {
      const close = pattern.indexOf('}', i);
      if (close === -1) return { ok: false, message: `"{" at position ${i + 1} is never closed` };
      const name = pattern.slice(i + 1, close);
      if (!(FIELD_TOKENS as readonly string[]).includes(name)) {
        return { ok: false, message: `unknown token "{${name}}"; known tokens are ${KNOWN_FIELDS}` };
      }
      segments.push({ kind: 'field', name: name as FieldToken });
      i = close + 1;
    } else if (char === '}') {
      return { ok: false, message: `"}" at position ${i + 1} has no opening "{"` };
    } else {
      const token = DATE_TOKENS.find((candidate) => pattern.startsWith(candidate, i));
      if (token) {
        segments.push({ kind: 'date', token });
        i += token.length;
      } else {
        literal(char);
        i += 1;
      }
    }
  }
  return { ok: true, segments };
}

/** Reads `'...'` from `start`; `''` inside is an escaped quote. Undefined when the quote never closes. */
function readQuoted(pattern: string, start: number): { text: string; end: number } | undefined {
  let text = '';
  let i = start + 1;
  while (i < pattern.length) {
    if (pattern[i] === "'") {
      if (pattern[i + 1] !== "'") return { text, end: i + 1 };
      text += "'";
      i += 2;
    } else {
      text += pattern[i];
      i += 1;
    }
  }
  return undefined;
}
