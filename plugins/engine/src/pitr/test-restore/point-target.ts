import type { ChangeLogKind, RunPlan } from '@holdfast/kernel';
import type { TestRestoreMetadata } from '../../store/metadata.js';
import type { ChangeLogStore, RecordedBase } from '../change-log-store.js';
import { recoveryWindow } from '../recovery-window.js';
import { chooseBase } from '../restore/choose-base.js';
import { randomInstant } from './random-instant.js';

/** One database a MySQL/MariaDB point-in-time test restore rebuilt, as it stood when checked. */
export interface PointTestRestoredDatabase {
  /** The database of the base backup. */
  name: string;
  /** The scratch database it was rebuilt in (dropped afterwards). */
  into: string;
  /** When the last transaction replayed into it began (whole seconds), null when none was replayed after the base. */
  recoveredTo: string | null;
  /** Row count of every table of the scratch database at the target. */
  tables: Record<string, number>;
}

/** What a point-in-time test restore records besides the fields every test restore has. */
export interface PointInTimeTestRestoreRecord {
  /** The random instant of the window the copy was restored to (ISO 8601). */
  target: string;
  /** The recoverable window it was picked from. */
  window: { start: string; end: string };
  baseExecutionId: string;
  /** `time`: replay stopped at the target; `latest`: no commit after the target was archived, so replay ran to the archive's end (the same state). */
  replayedTo: 'time' | 'latest';
  /** The newest commit the restored copy holds (the achieved recovery point), null when none was replayed. */
  recoveredTo: string | null;
  /** Seconds from `recoveredTo` to `target` (>= 0 when the restore is right); null without `recoveredTo`. */
  differenceSeconds: number | null;
  /** Seconds from the first byte of the base backup read to the restored copy (base, log and replay). */
  restoreSeconds: number | null;
  /** MySQL/MariaDB: every database of the base, rebuilt in its own scratch database. */
  databases?: PointTestRestoredDatabase[];
}

/** `metadata.testRestore` of a point-in-time test restore. */
export type PointTestRestoreMetadata = TestRestoreMetadata & { pointInTime?: PointInTimeTestRestoreRecord };

/** The instant a point-in-time test restore goes to, the base it starts from, and the record it fills in. */
export interface PointTarget {
  target: Date;
  base: RecordedBase;
  pointInTime: PointInTimeTestRestoreRecord;
}

/**
 * Picks the instant of a point-in-time test restore: uniformly at random in the job's recoverable window (so over many
 * runs every stretch of the archived log gets replayed, not only the newest), and the base backup a restore to it
 * starts from (the newest consistent at or before it). Throws the sentence the run fails with when there is no window.
 */
export async function choosePointTarget(store: ChangeLogStore, plan: RunPlan, logKind: ChangeLogKind, now = new Date()): Promise<PointTarget> {
  const [bases, pieces] = await Promise.all([store.basesOf(plan.job.id), store.piecesOf(plan.job.id)]);
  const ofKind = bases.filter((candidate) => candidate.logKind === logKind);
  const { window } = recoveryWindow({ kind: logKind, bases: ofKind, pieces, now });
  if (!window) {
    throw new Error(
      `job "${plan.job.name}" has no recoverable window: a point-in-time test restore needs a base backup followed by unbroken archived log (run the job to take a base backup; see GET /api/jobs/${plan.job.id}/point-in-time)`,
    );
  }
  const target = randomInstant(window);
  const base = chooseBase(window, ofKind, { type: 'time', time: target.toISOString() });
  return {
    target,
    base,
    pointInTime: {
      target: target.toISOString(),
      window: { start: window.start.toISOString(), end: window.end.toISOString() },
      baseExecutionId: base.executionId,
      replayedTo: 'time',
      recoveredTo: null,
      differenceSeconds: null,
      restoreSeconds: null,
    },
  };
}

/** Milliseconds as seconds to the millisecond. */
export const seconds = (ms: number): number => Math.round(ms) / 1000;
