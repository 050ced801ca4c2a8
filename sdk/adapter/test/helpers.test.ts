import { describe, expect, it } from 'vitest';
import { AdapterError, fromFileSystemError, resolveByteRange } from '../src/index.js';

const origin = { kind: 'storage', id: 'demo' };

describe('resolveByteRange', () => {
  it('returns the whole object without a range and clamps an end past the object', () => {
    expect(resolveByteRange(origin, 'k', 10, undefined)).toEqual({});
    expect(resolveByteRange(origin, 'k', 10, { start: 2 })).toEqual({ start: 2, end: 9 });
    expect(resolveByteRange(origin, 'k', 10, { start: 2, end: 4 })).toEqual({ start: 2, end: 4 });
    expect(resolveByteRange(origin, 'k', 10, { start: 9, end: 99 })).toEqual({ start: 9, end: 9 });
  });

  it.each([
    [{ start: 10 }],
    [{ start: -1 }],
    [{ start: 1.5 }],
    [{ start: 5, end: 4 }],
  ])('refuses %j with a CONFIG error naming the key', (range) => {
    expect(() => resolveByteRange(origin, 'backups/x.dump', 10, range)).toThrow(/^\[storage-demo\] invalid range .* for "backups\/x\.dump" of 10 bytes/);
  });
});

describe('fromFileSystemError', () => {
  it.each([
    ['ENOENT', 'NOT_FOUND'],
    ['ENOTDIR', 'NOT_FOUND'],
    ['EACCES', 'AUTH'],
    ['EPERM', 'AUTH'],
    ['EIO', 'TRANSIENT'],
  ])('maps %s to %s and names the operation', (errno, code) => {
    const error = fromFileSystemError(origin, Object.assign(new Error(`${errno}: boom`), { code: errno }), 'reading "a"');
    expect(error.code).toBe(code);
    expect(error.message).toBe(`[storage-demo] reading "a": ${errno}: boom`);
  });

  it('maps an abort and passes AdapterErrors through', () => {
    expect(fromFileSystemError(origin, Object.assign(new Error('aborted'), { name: 'AbortError' }), 'x').code).toBe('ABORTED');
    const original = new AdapterError(origin, 'UNSUPPORTED', 'no');
    expect(fromFileSystemError(origin, original, 'x')).toBe(original);
  });
});
