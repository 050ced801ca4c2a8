// A server nobody writes to stops adding to its change log (WAL, binary log): the copy of the piece being written
// stops growing, no new piece is archived, and the window's end (with the recovery point and its gauge) would stand
// still although nothing is missing; an alert on the recovery point would fire on every idle night. When a fresh
// reading of the server's position is inside the unchanged copy, every commit acknowledged before that reading is
// archived already, so a stream archives the same copy again with the newer date (it supersedes the last partial like
// a grown one does). Not at every flush interval: an idle database would upload a copy that often for nothing new;
// once the window's end is this old.

/** An unchanged copy is dated again once the window's end is this old (the docs' "A server nobody writes to"). */
export const IDLE_REDATE_MS = 60_000;

/**
 * Whether a copy that did not grow since the last report is archived again: the newest reading of the server's
 * position inside it (`covers`, epoch ms) is newer than what was claimed (`claimed`), and the claim is at least
 * `idleRedateMs` old at `now`.
 */
export function isIdleRedateDue(covers: number | undefined, claimed: number | undefined, now: number, idleRedateMs: number): boolean {
  if (covers === undefined || claimed === undefined) return false;
  return covers > claimed && now - claimed >= idleRedateMs;
}
