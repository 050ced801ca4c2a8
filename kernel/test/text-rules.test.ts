import { describe, expect, it } from 'vitest';
import { CONTROL_CHARACTER_MESSAGE, hasControlCharacter, lineText } from '../src/text-rules.js';

describe('lineText: the one rule for names, keys, paths and filters', () => {
  it('regression (issue 10.4): refuses NUL, other C0 controls, DEL and C1, with one message', () => {
    const field = lineText({ min: 1, max: 100 });
    for (const bad of ['a\u0000b', 'tab\there', 'line\nbreak', 'cr\r', 'esc\u001b[0m', 'del\u007f', 'c1\u0085']) {
      const result = field.safeParse(bad);
      expect(result.success, JSON.stringify(bad)).toBe(false);
      expect(result.error?.issues[0]?.message).toBe(CONTROL_CHARACTER_MESSAGE);
    }
  });

  it('accepts ordinary and non-ASCII single-line text and keeps the length bounds', () => {
    const field = lineText({ min: 1, max: 8 });
    expect(field.parse('a/é 1')).toBe('a/é 1');
    expect(field.safeParse('déjà vu').success).toBe(true);
    expect(field.safeParse('\u{1f600}').success).toBe(true);
    expect(field.safeParse('').success).toBe(false);
    expect(field.safeParse('123456789').success).toBe(false);
    expect(hasControlCharacter('plain')).toBe(false);
    expect(hasControlCharacter('a\u0000')).toBe(true);
  });
});
