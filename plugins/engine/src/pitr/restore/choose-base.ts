import type { RecordedBase } from '../change-log-store.js';
import type { RecoveryWindow } from '../recovery-window.js';
import { positionValueOf } from './log-positions.js';
import type { PointRestoreBody } from './point-restore-request.js';

/** Why no base backup serves a target: the sentence the route answers with. */
export class TargetOutsideWindow extends Error {}

const iso = (date: Date) => date.toISOString();

/**
 * The base backup a restore to `target` starts from, among the bases of the window (on its timeline, consistent
 * between its start and end) that `destinationId` holds when given:
 * - time: the newest consistent at or before the target (less log to replay); a time outside the window is refused;
 * - position: the newest whose stop position is at or before the target (replay must pass a base's stop position
 *   before the copy is consistent; a MySQL logical base is consistent at its start, `file:offset`); positions are
 *   compared in the bases' log kind, and the caller has checked the target is written in that kind;
 * - latest: the newest;
 * - name: the OLDEST, because a restore point is only found in log after the base, and Holdfast does not know where
 *   a name was created; starting from the window's start reaches every restore point of the window;
 * - gtid (MySQL/MariaDB): the OLDEST too, for the same reason: where a GTID was logged is only known by reading the
 *   log, which the restore does (it refuses a GTID from before its base, before writing anything).
 */
export function chooseBase(window: NonNullable<RecoveryWindow['window']>, bases: RecordedBase[], target: PointRestoreBody['target'], destinationId?: string): RecordedBase {
  const span = `the recoverable window is ${iso(window.start)} .. ${iso(window.end)}`;
  const usable = bases
    .filter((base) => base.timeline === window.timeline)
    .filter((base) => base.consistentAt.getTime() >= window.start.getTime() && base.consistentAt.getTime() <= window.end.getTime())
    .filter((base) => !destinationId || base.destinations.includes(destinationId))
    .sort((a, b) => a.consistentAt.getTime() - b.consistentAt.getTime());
  if (usable.length === 0) throw new TargetOutsideWindow(`no base backup of the window is held${destinationId ? ` by destination "${destinationId}"` : ''} (${span})`);
  if (target.type === 'time') {
    const time = new Date(target.time);
    if (time.getTime() < window.start.getTime() || time.getTime() > window.end.getTime()) {
      throw new TargetOutsideWindow(`target time ${iso(time)} is outside the recoverable window: ${span}`);
    }
    const before = usable.filter((base) => base.consistentAt.getTime() <= time.getTime());
    const base = before[before.length - 1];
    if (!base) throw new TargetOutsideWindow(`no base backup${destinationId ? ` held by destination "${destinationId}"` : ''} is consistent at or before ${iso(time)} (${span})`);
    return base;
  }
  if (target.type === 'position') {
    const kind = usable[0]!.logKind;
    const position = positionValueOf(kind, target.position);
    const before = usable.filter((base) => positionValueOf(kind, base.stopPosition) <= position);
    const base = before[before.length - 1];
    if (!base) throw new TargetOutsideWindow(`log position ${target.position} is before the end of the oldest base backup of the window (${usable[0]!.stopPosition}): ${span}`);
    return base;
  }
  if (target.type === 'name' || target.type === 'gtid') return usable[0]!;
  return usable[usable.length - 1]!;
}
