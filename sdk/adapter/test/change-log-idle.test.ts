// When a change-log stream archives an unchanged copy again (src/change-log-idle.ts): only for a newer reading of the
// server's position inside the copy, and only once the last claim is old enough.
import { describe, expect, it } from 'vitest';
import { isIdleRedateDue } from '../src/index.js';

describe('dating an unchanged change-log copy again', () => {
  it('is due only for a newer reading inside the copy, once the claim is old enough', () => {
    expect(isIdleRedateDue(10_500, 1_000, 11_000, 10_000)).toBe(true);
    expect(isIdleRedateDue(10_500, 1_000, 10_999, 10_000)).toBe(false); // the claim is not old enough yet
    expect(isIdleRedateDue(1_000, 1_000, 60_000, 10_000)).toBe(false); // no newer reading inside the copy
    expect(isIdleRedateDue(undefined, 1_000, 60_000, 10_000)).toBe(false); // the server wrote beyond the copy
    expect(isIdleRedateDue(10_500, undefined, 60_000, 10_000)).toBe(false); // nothing claimed yet: the grown path dates it
  });

});
