import { describe, expect, it } from 'vitest';
import { isAdapterError, normalizeStorageKey, normalizeStoragePrefix, splitStorageKey } from '../src/index.js';

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return isAdapterError(error) ? error.code : 'not-an-adapter-error';
  }
  return undefined;
}

describe('normalizeStorageKey', () => {
  it('accepts nested, unicode and space keys unchanged', () => {
    expect(normalizeStorageKey('a/b/c.bin')).toBe('a/b/c.bin');
    expect(normalizeStorageKey('dir with space/naïve 東京.bin')).toBe('dir with space/naïve 東京.bin');
    expect(normalizeStorageKey('.hidden/..dots..')).toBe('.hidden/..dots..');
  });

  it.each([
    ['../x', '".." segments'],
    ['a/../../b', '".." segments'],
    ['./a', '"." segments'],
    ['/abs', 'absolute paths'],
    ['a\u0000b', 'control characters'],
    ['a\\b', 'use "/"'],
    ['a//b', 'empty path segment'],
    ['a/', 'empty path segment'],
    ['', 'the key is empty'],
  ])('rejects %j with CONFIG naming the problem', (key, reason) => {
    expect(codeOf(() => normalizeStorageKey(key, { kind: 'storage', id: 'local' }))).toBe('CONFIG');
    expect(() => normalizeStorageKey(key, { kind: 'storage', id: 'local' })).toThrow(reason);
    expect(() => normalizeStorageKey(key, { kind: 'storage', id: 'local' })).toThrow(/^\[storage-local\] invalid storage key/);
  });
});

describe('normalizeStoragePrefix', () => {
  it('accepts empty, directory and partial prefixes', () => {
    expect(normalizeStoragePrefix('')).toBe('');
    expect(normalizeStoragePrefix('a/')).toBe('a/');
    expect(normalizeStoragePrefix('a/b')).toBe('a/b');
  });

  it.each(['../', 'a/../', '/a', 'a//b', 'a/..', 'x\u0000'])('rejects %j', (prefix) => {
    expect(codeOf(() => normalizeStoragePrefix(prefix))).toBe('CONFIG');
  });
});

describe('splitStorageKey', () => {
  it('splits parent and name', () => {
    expect(splitStorageKey('a/b/c')).toEqual({ parent: 'a/b', name: 'c' });
    expect(splitStorageKey('c')).toEqual({ parent: '', name: 'c' });
  });
});
