// For point-in-time sources: how old the newest claim of a change-log stream gets while nobody writes to the server
// (the SDK's isIdleRedateDue: an unchanged copy is archived again, dated anew, once the last claim is old). The helper
// consumes the stream as the engine's archiver does (read, then `archived()`), writes until the piece being written
// has been reported, then watches without writing and samples the newest claim's age.
import type { ChangeLogSegment, ChangeLogStream } from '@holdfast/sdk';

export interface IdleChangeLogWatch {
  /** The largest age of the newest `coversUntil` seen during the watch, in ms. */
  oldestAgeMs: number;
  /** Pieces reported more than two seconds after the last write. */
  piecesAfterLastWrite: number;
  /** Every piece's `coversUntil` is at or after the one reported before it. */
  claimsNeverGoBack: boolean;
  /** One line per piece (name, partial, end, claim): for assertion messages. */
  described: string;
}

/**
 * Writes with `write()` (every 500 ms, up to `firstPartialTimeoutMs`) until a partial was reported, then watches
 * `watchMs` without writing. The stream is consumed in the background from the call on; stop it with its signal.
 */
export async function watchIdleChangeLog(stream: ChangeLogStream, options: { write: () => Promise<unknown>; watchMs: number; firstPartialTimeoutMs?: number }): Promise<IdleChangeLogWatch> {
  const seen: Array<ChangeLogSegment & { seenAt: number }> = [];
  const consumed = (async () => {
    for await (const segment of stream.segments) {
      seen.push({ ...segment, seenAt: Date.now() });
      await stream.archived(segment);
    }
  })();
  consumed.catch(() => undefined);
  const deadline = Date.now() + (options.firstPartialTimeoutMs ?? 30_000);
  while (!seen.some((segment) => segment.partial)) {
    if (Date.now() > deadline) throw new Error(`no partial reported while writing; seen: ${seen.map((segment) => segment.name).join(' ') || 'nothing'}`);
    await options.write();
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const lastWrite = Date.now();
  let oldestAgeMs = 0;
  const watchEnd = Date.now() + options.watchMs;
  while (Date.now() < watchEnd) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const newest = Math.max(...seen.map((segment) => segment.coversUntil.getTime()));
    oldestAgeMs = Math.max(oldestAgeMs, Date.now() - newest);
  }
  return {
    oldestAgeMs,
    piecesAfterLastWrite: seen.filter((segment) => segment.seenAt > lastWrite + 2_000).length,
    claimsNeverGoBack: seen.every((segment, index) => index === 0 || segment.coversUntil.getTime() >= seen[index - 1]!.coversUntil.getTime()),
    described: seen.map((segment) => `${segment.name}${segment.partial ? '(p)' : ''}:${segment.endPosition ?? ''}@${segment.coversUntil.toISOString()}`).join(' '),
  };
}
