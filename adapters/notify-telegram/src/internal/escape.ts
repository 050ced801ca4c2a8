import type { ParseMode } from '../config.js';

/** Characters MarkdownV2 reserves, backslash included (Bot API "MarkdownV2 style"). */
const MARKDOWN_V2_SPECIAL = /[_*[\]()~`>#+\-=|{}.!\\]/g;
/** Characters legacy Markdown reserves (Bot API "Markdown style"). */
const MARKDOWN_SPECIAL = /[_*`[]/;

/** Escapes text for MarkdownV2: every reserved character gets a backslash, valid inside and outside entities. */
export function escapeMarkdownV2(text: string): string {
  return text.replace(MARKDOWN_V2_SPECIAL, '\\$&');
}

/** Escapes text for HTML mode: only `&`, `<` and `>` need entities (Bot API "HTML style"). */
export function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** Escapes text for legacy Markdown, outside entities: `_`, `*`, `` ` `` and `[` get a backslash. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[_*`[]/g, '\\$&');
}

/**
 * Legacy Markdown allows no escape inside an entity, so styled text is split: plain runs are wrapped in the marker and
 * each reserved character is written escaped between them (the Bot API's own advice: `*2*\**2=4*` for bold "2*2=4").
 */
function styleMarkdown(text: string, marker: '*' | '_'): string {
  let output = '';
  let run = '';
  for (const char of text) {
    if (MARKDOWN_SPECIAL.test(char)) {
      if (run.trim() !== '') output += `${marker}${run}${marker}`;
      else output += run;
      output += `\\${char}`;
      run = '';
    } else run += char;
  }
  return output + (run.trim() !== '' ? `${marker}${run}${marker}` : run);
}

/** Escape and style helpers of one parse mode. */
export interface Formatter {
  text(value: string): string;
  bold(value: string): string;
  italic(value: string): string;
}

/** The formatter of a parse mode. */
export function formatterFor(mode: ParseMode): Formatter {
  if (mode === 'HTML') return { text: escapeHtml, bold: (v) => `<b>${escapeHtml(v)}</b>`, italic: (v) => `<i>${escapeHtml(v)}</i>` };
  if (mode === 'MarkdownV2') {
    return { text: escapeMarkdownV2, bold: (v) => `*${escapeMarkdownV2(v)}*`, italic: (v) => `_${escapeMarkdownV2(v)}_` };
  }
  return { text: escapeMarkdown, bold: (v) => styleMarkdown(v, '*'), italic: (v) => styleMarkdown(v, '_') };
}
