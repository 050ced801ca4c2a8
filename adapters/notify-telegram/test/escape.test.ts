import { describe, expect, it } from 'vitest';
import { escapeHtml, escapeMarkdown, escapeMarkdownV2, formatterFor, renderTelegramText } from '../src/index.js';
import { PARSERS, parseHtml, parseMarkdown, parseMarkdownV2 } from './telegram-entities.js';

const TRICKY = 'a_b*c[d](e)~f`g>h#i+j-k=l|m{n}o.p!q\\r <tag> & "x" é 🚀';

describe('escaping for each Telegram parse mode (tricky strings)', () => {
  it('MarkdownV2 escapes _*[]()~`>#+-=|{}.! and the backslash', () => {
    expect(escapeMarkdownV2('_*[]()~`>#+-=|{}.!\\')).toBe('\\_\\*\\[\\]\\(\\)\\~\\`\\>\\#\\+\\-\\=\\|\\{\\}\\.\\!\\\\');
    expect(escapeMarkdownV2('v1.2 (ok) - 100%')).toBe('v1\\.2 \\(ok\\) \\- 100%');
    expect(parseMarkdownV2(escapeMarkdownV2(TRICKY))).toEqual({ ok: true, visible: TRICKY });
  });

  it('HTML escapes only &, < and >', () => {
    expect(escapeHtml('<b>&amp; "q" \'s\' *x*')).toBe('&lt;b&gt;&amp;amp; "q" \'s\' *x*');
    expect(parseHtml(escapeHtml(TRICKY)).ok).toBe(true);
  });

  it('legacy Markdown escapes _ * ` [ and nothing else', () => {
    expect(escapeMarkdown('snake_case *b* `c` [l](u) .!-')).toBe('snake\\_case \\*b\\* \\`c\\` \\[l](u) .!-');
    expect(parseMarkdown(escapeMarkdown(TRICKY))).toEqual({ ok: true, visible: TRICKY });
  });

  it('legacy Markdown bold splits around reserved characters, since escapes are not allowed inside entities', () => {
    expect(formatterFor('Markdown').bold('2*2=4')).toBe('*2*\\**2=4*');
    expect(formatterFor('Markdown').bold('db_main')).toBe('*db*\\_*main*');
    expect(formatterFor('Markdown').italic('_x_')).toBe('\\__x_\\_');
    expect(parseMarkdown(formatterFor('Markdown').bold(TRICKY))).toEqual({ ok: true, visible: TRICKY });
  });

  it('the unescaped tricky string is refused by each mode (the receiver parsers are not lenient)', () => {
    for (const parse of Object.values(PARSERS)) expect(parse(TRICKY).ok).toBe(false);
  });

  it.each(['HTML', 'MarkdownV2', 'Markdown'] as const)('a whole %s message with tricky title, text and fields parses back to the visible text', (mode) => {
    const text = renderTelegramText(TRICKY, { title: `Backup ${TRICKY}`, eventType: 'backup_failure', fields: [{ name: 'Job_*', value: TRICKY }, { name: 'Empty', value: '' }] }, mode);
    const parsed = PARSERS[mode]?.(text);
    expect(parsed).toEqual({ ok: true, visible: expect.stringContaining(TRICKY) });
    expect(parsed?.ok && parsed.visible).toContain('Empty: -');
    expect(parsed?.ok && parsed.visible).toContain('Holdfast · backup_failure');
  });
});
