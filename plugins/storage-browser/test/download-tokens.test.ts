// The SPEC "Download token" state table on the store itself, with an injected clock and fake timers: valid, used,
// expired, removal of used tokens after a minute and the 60-second sweep of expired ones.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DownloadTokenStore, TOKEN_LIFETIME_MS } from '../src/download-tokens.js';
import { attachmentHeader } from '../src/routes/storage-routes.js';

describe('DownloadTokenStore', () => {
  let now: number;
  let store: DownloadTokenStore;
  const grant = { storageId: 'disk', file: 'a.dump', decrypt: true };

  beforeEach(() => {
    vi.useFakeTimers();
    now = Date.parse('2026-11-21T00:00:00Z');
    store = new DownloadTokenStore({ now: () => now });
  });

  afterEach(() => {
    store.stop();
    vi.useRealTimers();
  });

  it('issues 32 random bytes as base64url that expire 5 minutes later, unused', () => {
    const record = store.issue(grant);
    expect(Buffer.from(record.token, 'base64url')).toHaveLength(32);
    expect(record.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(record).toMatchObject({ ...grant, expiresAt: now + 5 * 60_000, usedAt: null });
    expect(store.issue(grant).token).not.toBe(record.token);
    expect(store.validate(record.token)).toBe(record);
  });

  it('rejects unknown and expired tokens with 401', () => {
    expect(() => store.validate('nope')).toThrow(expect.objectContaining({ status: 401, reason: 'download token unknown' }));
    const record = store.issue(grant);
    now += TOKEN_LIFETIME_MS - 1;
    expect(store.validate(record.token).token).toBe(record.token);
    now += 1;
    expect(() => store.validate(record.token)).toThrow(expect.objectContaining({ status: 401, reason: 'download token expired' }));
    expect(store.has(record.token)).toBe(false);
  });

  it('stays valid until consumed (a failed download consumes nothing), then refuses and forgets it after a minute', () => {
    const record = store.issue(grant);
    store.validate(record.token);
    store.validate(record.token);
    store.consume(record.token);
    expect(() => store.validate(record.token)).toThrow(expect.objectContaining({ status: 401, reason: 'download token already used' }));
    vi.advanceTimersByTime(59_999);
    expect(store.has(record.token)).toBe(true);
    vi.advanceTimersByTime(1);
    expect(store.has(record.token)).toBe(false);
  });

  it('regression (issue 10.5): a claimed token refuses every other request until released or consumed', () => {
    const record = store.issue(grant);
    expect(store.claim(record.token)).toBe(record);
    expect(() => store.claim(record.token)).toThrow(expect.objectContaining({ status: 401, reason: 'download token in use by another download' }));
    store.release(record.token);
    store.claim(record.token);
    store.consume(record.token);
    store.release(record.token);
    expect(() => store.claim(record.token)).toThrow(expect.objectContaining({ status: 401, reason: 'download token already used' }));
  });

  it('keeps the archive path of a single-file grant of a seekable archive until the claim', () => {
    const fileGrant = { storageId: 'disk', file: 'tree_inc-1.hfa.enc', decrypt: true, path: '0-src/docs/report.pdf' };
    const record = store.issue(fileGrant);
    expect(store.claim(record.token)).toMatchObject(fileGrant);
  });

  it('sweeps expired tokens every 60 seconds once started, keeping live ones', () => {
    store.start();
    const early = store.issue(grant);
    now += 2 * 60_000;
    const late = store.issue(grant);
    now += 3 * 60_000;
    vi.advanceTimersByTime(60_000);
    expect(store.has(early.token)).toBe(false);
    expect(store.has(late.token)).toBe(true);
    now += 2 * 60_000;
    vi.advanceTimersByTime(60_000);
    expect(store.size).toBe(0);
  });
});

describe('attachmentHeader', () => {
  it('sends ASCII names as they are', () => {
    expect(attachmentHeader('shop_2026-11-21.dump.gz')).toBe('attachment; filename=shop_2026-11-21.dump.gz');
  });

  it('sends non-ASCII names as UTF-8 in filename* with an ASCII fallback', () => {
    expect(attachmentHeader('bücher ☃.dump')).toBe(`attachment; filename="b?cher ?.dump"; filename*=UTF-8''b%C3%BCcher%20%E2%98%83.dump`);
  });

  it('escapes quotes so a name cannot end the parameter early', () => {
    expect(attachmentHeader('a "b".dump')).toBe('attachment; filename="a \\"b\\".dump"');
  });
});
