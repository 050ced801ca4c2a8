// The retention preview's object lock rule on its own (the route is tested against Ceph in object-lock.test.ts and
// on a disk destination in routes.test.ts): only a pruned backup whose date is still ahead changes.
import { describe, expect, it } from 'vitest';
import type { RetentionVerdict } from '../src/run/retention.js';
import { previewWithObjectLock } from '../src/run/retention-preview.js';

const now = new Date('2026-12-06T12:00:00.000Z');
const verdicts: RetentionVerdict[] = [
  { key: 'new.dump', createdAt: '2026-12-06T02:00:00.000Z', locked: false, action: 'keep', reason: 'daily 2026-12-06' },
  { key: 'recent.dump', createdAt: '2026-12-05T02:00:00.000Z', locked: false, action: 'prune', reason: 'not kept by any tier' },
  { key: 'old.dump', createdAt: '2026-11-01T02:00:00.000Z', locked: false, action: 'prune', reason: 'not kept by any tier' },
];
const twoDays = (createdAt: Date) => new Date(createdAt.getTime() + 2 * 24 * 60 * 60 * 1000);

describe('previewWithObjectLock', () => {
  it('leaves the verdicts of a destination without object lock unchanged, with a null date', () => {
    expect(previewWithObjectLock(verdicts, undefined, now)).toEqual(verdicts.map((verdict) => ({ ...verdict, retainUntil: null })));
  });

  it('keeps a pruned backup whose retain-until date is ahead, naming the date; the others keep their verdicts', () => {
    const [kept, locked, expired] = previewWithObjectLock(verdicts, twoDays, now);
    expect(kept).toEqual({ ...verdicts[0], retainUntil: '2026-12-08T02:00:00.000Z' });
    expect(locked).toEqual({
      ...verdicts[1],
      action: 'keep',
      retainUntil: '2026-12-07T02:00:00.000Z',
      reason: "locked until 2026-12-07T02:00:00.000Z by the destination's object lock (the policy would prune it: not kept by any tier)",
    });
    expect(expired).toEqual({ ...verdicts[2], retainUntil: '2026-11-03T02:00:00.000Z' });
  });
});
