import type { ChangeLogKind } from '@holdfast/kernel';
import type { ArchivedPiece, RecordedBase } from './change-log-store.js';
import { DEFAULT_WAL_SEGMENT_BYTES, namingOf, type LogNaming } from './log-naming.js';

/** What the window needs of an archived piece. */
export type WindowPiece = Pick<ArchivedPiece, 'name' | 'timeline' | 'partial' | 'coversUntil' | 'storedSize' | 'plainSize'>;
/** What the window needs of a base backup. */
export type WindowBase = Pick<RecordedBase, 'startSegment' | 'timeline' | 'consistentAt' | 'executionId'>;

/** A hole in the archived log: nothing between `after` and `next`. */
export interface LogGap {
  after: string;
  next: string;
  /** Segments missing between them. */
  missing: number;
}

/** The recoverable window of one job (docs/pitr.md, "The recoverable window"). */
export interface RecoveryWindow {
  /** Null when no base backup is followed by contiguous archived log up to the newest piece. */
  window: { start: Date; end: Date; baseExecutionId: string; timeline: number } | null;
  gaps: LogGap[];
  /** Archived pieces (completed segments and current partials) and their bytes, one copy. */
  segments: number;
  storedBytes: number;
  /** Seconds from the window's end to `now`; null without a window. */
  recoveryPointSeconds: number | null;
}

interface Numbered {
  piece: WindowPiece;
  sequence: number;
}

/**
 * The recoverable window from a job's base backups and archived pieces, on the newest timeline (a timeline switch
 * ends the window of the older one; restoring across it is not offered yet). The window ends at the newest piece
 * reachable without a missing segment name; it starts at the earliest base backup whose start segment lies in that
 * same unbroken run and that is consistent before the end. A partial counts only for the newest name: an older name
 * with only a partial is a segment whose tail never arrived, a gap.
 */
export function recoveryWindow(input: { kind: ChangeLogKind; bases: WindowBase[]; pieces: WindowPiece[]; now: Date; walSegmentBytes?: number }): RecoveryWindow {
  const naming = namingOf(input.kind, input.walSegmentBytes ?? walSegmentBytesOf(input.pieces));
  const segments = input.pieces.length;
  const storedBytes = input.pieces.reduce((sum, piece) => sum + piece.storedSize, 0);
  const empty: RecoveryWindow = { window: null, gaps: [], segments, storedBytes, recoveryPointSeconds: null };
  if (input.pieces.length === 0) return empty;
  const timeline = Math.max(...input.pieces.map((piece) => piece.timeline));
  const chain = contiguousPieces(input.pieces.filter((piece) => piece.timeline === timeline), naming);
  if (chain.length === 0) return empty;
  const gaps = gapsOf(chain);
  const lastRun = newestRun(chain);
  const end = lastRun[lastRun.length - 1]!.piece.coversUntil;
  const first = lastRun[0]!.sequence;
  const last = lastRun[lastRun.length - 1]!.sequence;
  const usable = input.bases
    .filter((base) => base.timeline === timeline && base.consistentAt.getTime() <= end.getTime())
    .filter((base) => {
      const start = naming.sequence(base.startSegment);
      return start !== null && start >= first && start <= last;
    })
    .sort((a, b) => a.consistentAt.getTime() - b.consistentAt.getTime());
  const base = usable[0];
  if (!base) return { ...empty, gaps };
  return {
    window: { start: base.consistentAt, end, baseExecutionId: base.executionId, timeline },
    gaps,
    segments,
    storedBytes,
    recoveryPointSeconds: Math.max(0, Math.round((input.now.getTime() - end.getTime()) / 1000)),
  };
}

/**
 * One piece per sequence number in order: the completed segment where there is one, and after the newest completed
 * segment the newest partial (a partial of an older name does not count: that segment is incomplete).
 */
function contiguousPieces(pieces: WindowPiece[], naming: LogNaming): Numbered[] {
  const numbered = pieces.flatMap((piece) => {
    const sequence = naming.sequence(piece.name);
    return sequence === null ? [] : [{ piece, sequence }];
  });
  const completed = new Map<number, Numbered>();
  for (const item of numbered) if (!item.piece.partial) completed.set(item.sequence, item);
  const ordered = [...completed.values()].sort((a, b) => a.sequence - b.sequence);
  const newestCompleted = ordered.length > 0 ? ordered[ordered.length - 1]!.sequence : -Infinity;
  const partial = numbered
    .filter((item) => item.piece.partial && item.sequence > newestCompleted)
    .sort((a, b) => a.sequence - b.sequence || a.piece.coversUntil.getTime() - b.piece.coversUntil.getTime())
    .pop();
  return partial ? [...ordered, partial] : ordered;
}

function gapsOf(chain: Numbered[]): LogGap[] {
  const gaps: LogGap[] = [];
  for (let index = 1; index < chain.length; index++) {
    const before = chain[index - 1]!;
    const after = chain[index]!;
    if (after.sequence === before.sequence + 1) continue;
    gaps.push({ after: before.piece.name, next: after.piece.name, missing: after.sequence - before.sequence - 1 });
  }
  return gaps;
}

function newestRun(chain: Numbered[]): Numbered[] {
  let start = chain.length - 1;
  while (start > 0 && chain[start - 1]!.sequence === chain[start]!.sequence - 1) start--;
  return chain.slice(start);
}

/**
 * A completed WAL segment file is exactly `wal_segment_size` bytes: the largest completed piece says the size when it
 * is a power of two PostgreSQL allows (1 MiB .. 1 GiB), else the default.
 */
function walSegmentBytesOf(pieces: WindowPiece[]): number {
  const sizes = pieces.filter((piece) => !piece.partial).map((piece) => piece.plainSize);
  const largest = sizes.length > 0 ? Math.max(...sizes) : 0;
  const isPowerOfTwo = largest > 0 && (largest & (largest - 1)) === 0;
  return isPowerOfTwo && largest >= 1024 * 1024 && largest <= 1024 * 1024 * 1024 ? largest : DEFAULT_WAL_SEGMENT_BYTES;
}
