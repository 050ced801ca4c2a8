/**
 * Parsers of Telegram's three formatting modes as the Bot API documents them ("Formatting options"), used by the
 * local receiver to refuse what Telegram refuses with "Bad Request: can't parse entities". Each returns the visible
 * text (what Telegram counts against the 4 096 limit) or the first problem. They cover the entities this channel
 * uses (bold, italic; HTML tags b/i/u/s/code/pre/a) and treat any other reserved character as an error.
 */
export type Parsed = { ok: true; visible: string } | { ok: false; problem: string };

const V2_RESERVED = '_*[]()~`>#+-=|{}.!\\';

/** MarkdownV2: `\` escapes any character; `*`, `_`, `~` toggle entities; every other reserved character must be escaped. */
export function parseMarkdownV2(text: string): Parsed {
  const open = new Set<string>();
  let visible = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char === '\\') {
      const next = text[i + 1];
      if (next === undefined) return { ok: false, problem: 'trailing backslash' };
      visible += next;
      i++;
    } else if (char === '*' || char === '_' || char === '~') {
      if (open.has(char)) open.delete(char);
      else open.add(char);
    } else if (V2_RESERVED.includes(char)) {
      return { ok: false, problem: `character '${char}' is reserved and must be escaped with the preceding character '\\'` };
    } else visible += char;
  }
  if (open.size > 0) return { ok: false, problem: `can't find end of the entity ${[...open].join('')}` };
  return { ok: true, visible };
}

const HTML_TAGS = new Set(['b', 'strong', 'i', 'em', 'u', 'ins', 's', 'strike', 'del', 'code', 'pre', 'blockquote']);
const HTML_ENTITY = /^&(lt|gt|amp|quot|#\d+|#x[0-9a-f]+);/i;

function decodeEntity(name: string): string {
  const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };
  if (named[name.toLowerCase()] !== undefined) return named[name.toLowerCase()] as string;
  return String.fromCodePoint(name[1]?.toLowerCase() === 'x' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1)));
}

/** HTML: only supported tags, properly nested; `&` must start a named or numeric entity; a bare `<` is an error. */
export function parseHtml(text: string): Parsed {
  const stack: string[] = [];
  let visible = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char === '<') {
      const tag = /^<(\/?)([a-z-]+)>/.exec(text.slice(i));
      if (!tag || !HTML_TAGS.has(tag[2] as string)) return { ok: false, problem: `unsupported start tag at byte offset ${i}` };
      if (tag[1] === '/') {
        if (stack.pop() !== tag[2]) return { ok: false, problem: `unmatched end tag ${tag[2]}` };
      } else stack.push(tag[2] as string);
      i += tag[0].length - 1;
    } else if (char === '&') {
      const entity = HTML_ENTITY.exec(text.slice(i));
      if (!entity) return { ok: false, problem: `unsupported entity at byte offset ${i}` };
      visible += decodeEntity(entity[1] as string);
      i += entity[0].length - 1;
    } else if (char === '>') {
      // Telegram tolerates a bare '>', but this channel always escapes it: treat it as a bug.
      return { ok: false, problem: `unescaped '>' at byte offset ${i}` };
    } else visible += char;
  }
  if (stack.length > 0) return { ok: false, problem: `can't find end tag for ${stack.join(', ')}` };
  return { ok: true, visible };
}

/**
 * Legacy Markdown: `\` escapes `_`, `*`, `` ` ``, `[` outside entities only; `*` and `_` toggle entities, which
 * cannot nest and allow no escapes inside; `` ` `` and `[` are not used by this channel and must be escaped.
 */
export function parseMarkdown(text: string): Parsed {
  let entity: string | undefined;
  let visible = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    const next = text[i + 1];
    if (char === '\\' && next !== undefined && '_*`['.includes(next)) {
      if (entity) return { ok: false, problem: 'escapes are not allowed inside an entity' };
      visible += next;
      i++;
    } else if (char === '*' || char === '_') {
      if (entity === undefined) entity = char;
      else if (entity === char) entity = undefined;
      else return { ok: false, problem: 'entities must not be nested' };
    } else if (char === '`' || char === '[') {
      return { ok: false, problem: `unescaped '${char}' at byte offset ${i}` };
    } else visible += char;
  }
  if (entity) return { ok: false, problem: `can't find end of the entity starting with ${entity}` };
  return { ok: true, visible };
}

/** The parser of a parse mode. */
export const PARSERS: Record<string, (text: string) => Parsed> = { MarkdownV2: parseMarkdownV2, HTML: parseHtml, Markdown: parseMarkdown };
