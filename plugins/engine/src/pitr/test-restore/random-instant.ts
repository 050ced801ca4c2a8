import { randomInt } from 'node:crypto';

/** A window of instants, both ends included. */
export interface InstantSpan {
  start: Date;
  end: Date;
}

/** Picks a whole millisecond in [0, `bound`), uniformly. */
export type PickMillisecond = (bound: number) => number;

/** `crypto.randomInt` takes bounds up to 2^48: about 8 900 years of milliseconds, far more than any window. */
const MAX_CRYPTO_BOUND = 2 ** 48;

const cryptoPick: PickMillisecond = (bound) => randomInt(bound);

/**
 * A uniformly random instant of `span`, to the millisecond, both ends included: each test restore lands somewhere else
 * in the window, so over time every stretch of the archived log is replayed, not only its newest part. A span whose end
 * is before its start has no instant (throws).
 */
export function randomInstant(span: InstantSpan, pick: PickMillisecond = cryptoPick): Date {
  const start = span.start.getTime();
  const width = span.end.getTime() - start;
  if (!Number.isFinite(width) || width < 0) throw new Error(`the window ${span.start.toISOString()} .. ${span.end.toISOString()} holds no instant`);
  const bound = Math.min(width + 1, MAX_CRYPTO_BOUND);
  const offset = pick(bound);
  if (!Number.isInteger(offset) || offset < 0 || offset >= bound) throw new Error(`picked offset ${offset} is outside 0 .. ${bound - 1}`);
  return new Date(start + offset);
}
