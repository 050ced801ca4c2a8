// The rules of a point-in-time restore request that need no server: the body's schema and which base backup a
// target starts from (pitr/restore/). The real restores are in pitr-end-to-end.test.ts.
import { describe, expect, it } from 'vitest';
import type { RecordedBase } from '../../src/pitr/change-log-store.js';
import { chooseBase, TargetOutsideWindow } from '../../src/pitr/restore/choose-base.js';
import { pointRestoreBodySchema, positionValue } from '../../src/pitr/restore/point-restore-request.js';
import { codecOfKey, pieceFor } from '../../src/pitr/restore/stored-log-reader.js';

const at = (minute: number) => new Date(Date.UTC(2026, 11, 6, 4, minute));

function base(id: string, minute: number, stop: string, destinations = ['a', 'b'], timeline = 1): RecordedBase {
  return {
    executionId: id,
    jobId: 'job',
    storageKey: `${id}.tar.zst.enc`,
    logKind: 'postgres-wal',
    startPosition: '0/2000028',
    stopPosition: stop,
    startSegment: '000000010000000000000002',
    timeline,
    systemId: '1',
    serverVersion: '15.20',
    startedAt: at(minute - 1),
    consistentAt: at(minute),
    destinations,
  };
}

const window = { start: at(10), end: at(50), baseExecutionId: 'first', timeline: 1 };
const bases = [base('old', 5, '0/1000000'), base('first', 10, '0/3000100'), base('second', 30, '0/9000100', ['b']), base('other-timeline', 40, '0/A000000', ['a'], 2)];

describe('chooseBase', () => {
  it('takes the newest base consistent at or before a time, and refuses a time outside the window with the window in the message', () => {
    expect(chooseBase(window, bases, { type: 'time', time: at(20).toISOString() }).executionId).toBe('first');
    expect(chooseBase(window, bases, { type: 'time', time: at(45).toISOString() }).executionId).toBe('second');
    expect(() => chooseBase(window, bases, { type: 'time', time: at(51).toISOString() })).toThrow(TargetOutsideWindow);
    expect(() => chooseBase(window, bases, { type: 'time', time: at(9).toISOString() })).toThrow(/2026-12-06T04:10:00.000Z \.\. 2026-12-06T04:50:00.000Z/);
  });

  it('honours the destination: a base the destination does not hold is never chosen', () => {
    expect(chooseBase(window, bases, { type: 'time', time: at(45).toISOString() }, 'a').executionId).toBe('first');
    expect(() => chooseBase(window, bases, { type: 'latest' }, 'c')).toThrow(/destination "c"/);
  });

  it('latest takes the newest base of the window timeline, a name the oldest, a position the newest stopped before it', () => {
    expect(chooseBase(window, bases, { type: 'latest' }).executionId).toBe('second');
    expect(chooseBase(window, bases, { type: 'name', name: 'before-upgrade' }).executionId).toBe('first');
    expect(chooseBase(window, bases, { type: 'position', position: '0/9000100' }).executionId).toBe('second');
    expect(chooseBase(window, bases, { type: 'position', position: '0/8FFFFFF' }).executionId).toBe('first');
    expect(() => chooseBase(window, bases, { type: 'position', position: '0/3000000' })).toThrow(/before the end of the oldest base backup/);
  });
});

describe('the request body', () => {
  const parse = (body: unknown) => pointRestoreBodySchema.safeParse(body);

  it('takes the four target kinds', () => {
    for (const target of [{ type: 'latest' }, { type: 'time', time: '2026-12-06T04:05:06.789+02:00' }, { type: 'position', position: '0/3000028' }, { type: 'name', name: 'x' }]) {
      expect(parse({ target, targetPath: '/var/backups/r1' }).success, JSON.stringify(target)).toBe(true);
    }
  });

  it('refuses a time without offset, a bad position, a long name, a relative or .. path, a low port and unknown fields', () => {
    expect(parse({ target: { type: 'time', time: '2026-12-06T04:05:06' }, targetPath: '/r' }).success).toBe(false);
    expect(parse({ target: { type: 'time', time: '2026-13-45T04:05:06Z' }, targetPath: '/r' }).success).toBe(false);
    expect(parse({ target: { type: 'position', position: '3000028' }, targetPath: '/r' }).success).toBe(false);
    expect(parse({ target: { type: 'name', name: 'n'.repeat(64) }, targetPath: '/r' }).success).toBe(false);
    expect(parse({ target: { type: 'latest' }, targetPath: 'relative/r' }).success).toBe(false);
    expect(parse({ target: { type: 'latest' }, targetPath: '/var/backups/../etc' }).success).toBe(false);
    expect(parse({ target: { type: 'latest' }, targetPath: '/r', servePort: 80 }).success).toBe(false);
    expect(parse({ target: { type: 'latest' }, targetPath: '/r', overwrite: true }).success).toBe(false);
    expect(parse({ target: { type: 'latest', time: '2026-12-06T04:05:06Z' }, targetPath: '/r' }).success).toBe(false);
  });
});

describe('reading stored log pieces', () => {
  it('orders log positions as numbers', () => {
    expect(positionValue('1/0') > positionValue('0/FFFFFFFF')).toBe(true);
    expect(positionValue('0/3000028')).toBe(0x3000028n);
  });

  it('reads the codec and encryption from a stored key', () => {
    expect(codecOfKey('pitr/j/wal/00000001/000000010000000000000003.zst.enc')).toEqual({ codec: 'ZSTD', isEncrypted: true });
    expect(codecOfKey('pitr/j/wal/00000001/000000010000000000000003.partial.gz')).toEqual({ codec: 'GZIP', isEncrypted: false });
    expect(codecOfKey('pitr/j/wal/00000001/000000010000000000000003')).toEqual({ codec: 'NONE', isEncrypted: false });
  });

  it('takes the completed segment of a name, else its newest partial', () => {
    const piece = (partial: boolean, minute: number) => ({ id: minute, jobId: 'j', name: 'S', timeline: 1, partial, storageKey: `${partial}-${minute}`, plainSize: 1, storedSize: 1, sha256: '', coversUntil: at(minute), archivedAt: at(minute), destinations: ['a'] });
    expect(pieceFor([piece(true, 1), piece(false, 2), piece(true, 3)], 'S')?.storageKey).toBe('false-2');
    expect(pieceFor([piece(true, 1), piece(true, 3), piece(true, 2)], 'S')?.storageKey).toBe('true-3');
    expect(pieceFor([piece(true, 1)], 'T')).toBeUndefined();
  });
});
