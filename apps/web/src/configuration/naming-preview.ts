/**
 * A preview of a naming template, rendered in the browser with the tokens and rules of docs/naming.md (the server's
 * `naming-template` adapter stays the judge: it validates the pattern on save and renders the real names).
 */
export interface NamingSample {
  jobName: string;
  dbName: string;
  chain: string;
  at: Date;
  timeZone: string;
}

/** The example moment of docs/naming.md: 19 Nov 2026 10:05:09.042 UTC. */
export const SAMPLE_MOMENT = new Date(Date.UTC(2026, 10, 19, 10, 5, 9, 42));

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** Longest first: `yyyy` before `yy`, `MMM` before `MM`, `SSS` before `ss`. */
const DATE_TOKENS = ['yyyy', 'yy', 'MMM', 'MM', 'dd', 'HH', 'mm', 'ss', 'SSS'].sort((a, b) => b.length - a.length);
const NAME_TOKENS = ['job_name', 'db_name', 'chain'] as const;
const UNSAFE = /[/\\<>:"|?*\u0000-\u001f\u007f-\u009f]/g;

type Piece = { kind: 'text'; value: string } | { kind: 'name'; token: (typeof NAME_TOKENS)[number] };

function wallClock(at: Date, timeZone: string): Record<string, string> {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })
      .formatToParts(at)
      .map((part) => [part.type, part.value]),
  );
  return {
    yyyy: parts.year!,
    yy: parts.year!.slice(-2),
    MMM: MONTHS[Number(parts.month) - 1]!,
    MM: parts.month!,
    dd: parts.day!,
    HH: parts.hour!,
    mm: parts.minute!,
    ss: parts.second!,
    SSS: String(at.getUTCMilliseconds()).padStart(3, '0'),
  };
}

function replaceDates(text: string, clock: Record<string, string>): string {
  let out = '';
  for (let index = 0; index < text.length; ) {
    const token = DATE_TOKENS.find((candidate) => text.startsWith(candidate, index));
    out += token ? clock[token] : text[index];
    index += token ? token.length : 1;
  }
  return out;
}

/** Splits the pattern into text (date tokens resolved, quoted parts literal) and name tokens; throws on bad syntax. */
function parse(pattern: string, clock: Record<string, string>): Piece[] {
  const pieces: Piece[] = [];
  let raw = '';
  const flush = () => {
    if (raw) pieces.push({ kind: 'text', value: replaceDates(raw, clock) });
    raw = '';
  };
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index]!;
    if (char === "'") {
      if (pattern[index + 1] === "'") {
        flush();
        pieces.push({ kind: 'text', value: "'" });
        index++;
        continue;
      }
      const end = pattern.indexOf("'", index + 1);
      if (end < 0) throw new Error(`the quote at position ${index} is never closed`);
      flush();
      pieces.push({ kind: 'text', value: pattern.slice(index + 1, end) });
      index = end;
    } else if (char === '{') {
      const end = pattern.indexOf('}', index);
      if (end < 0) throw new Error(`"{" at position ${index} is never closed`);
      const token = pattern.slice(index + 1, end);
      if (!NAME_TOKENS.includes(token as (typeof NAME_TOKENS)[number])) throw new Error(`unknown token "{${token}}"; known tokens are {job_name}, {db_name}, {chain}`);
      flush();
      pieces.push({ kind: 'name', token: token as (typeof NAME_TOKENS)[number] });
      index = end;
    } else if (char === '}') {
      throw new Error(`stray "}" at position ${index}`);
    } else {
      raw += char;
    }
  }
  flush();
  return pieces;
}

/** The rendered base name, or the problem that keeps the pattern from rendering. */
export function previewName(pattern: string, sample: NamingSample): { name: string } | { problem: string } {
  if (!pattern.trim()) return { problem: 'pattern is empty' };
  let pieces: Piece[];
  try {
    pieces = parse(pattern, wallClock(sample.at, sample.timeZone));
  } catch (error) {
    return { problem: `pattern is malformed: ${(error as Error).message}` };
  }
  const values = { job_name: sample.jobName, db_name: sample.dbName, chain: sample.chain };
  const texts = pieces.map((piece) => (piece.kind === 'text' ? piece.value : values[piece.token].replace(UNSAFE, '_')));
  // An empty {db_name} or {chain} takes one adjacent "_" or "-" with it: the one before, else the one after.
  pieces.forEach((piece, index) => {
    if (piece.kind !== 'name' || texts[index] !== '') return;
    const before = texts[index - 1];
    const after = texts[index + 1];
    if (before && /[_-]$/.test(before)) texts[index - 1] = before.slice(0, -1);
    else if (after && /^[_-]/.test(after)) texts[index + 1] = after.slice(1);
  });
  const name = texts.join('').replace(/^[.\s]+|[.\s]+$/g, '');
  return { name: name || 'backup' };
}
