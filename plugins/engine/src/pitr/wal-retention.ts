import { isAdapterError, type ChangeLogKind } from '@holdfast/kernel';
import type { StorageInstance } from '../run/adapters.js';
import type { ArchivedPiece, ChangeLogStore, RecordedBase } from './change-log-store.js';
import { binlogNaming } from './log-naming.js';

/**
 * A piece's place in the log within its timeline, exact whatever the segment size: a WAL name is
 * `TTTTTTTT` + log id + segment (fixed-width hex), so the last 16 digits order it; a binary log counts up.
 * Null: not a segment name (a history file, anything unknown), which retention never deletes.
 */
export function logPosition(kind: ChangeLogKind, name: string): bigint | null {
  if (kind === 'mysql-binlog') {
    const sequence = binlogNaming.sequence(name);
    return sequence === null ? null : BigInt(sequence);
  }
  return /^[0-9A-F]{24}$/i.test(name) ? BigInt(`0x${name.slice(8)}`) : null;
}

/** Why a piece is no longer needed, for the log. */
export interface PrunablePiece {
  piece: ArchivedPiece;
  reason: string;
}

/**
 * The archived pieces no retained base backup needs (docs/pitr.md, "Retention"). A base backup is retained while a
 * destination still holds it (`bases` are those: a locked one, by flag or object lock, is never deleted so stays).
 * On a timeline with retained bases, pieces strictly before the oldest one's start segment go; a timeline older than
 * the oldest timeline holding a base goes whole; newer timelines stay (a base replays into them). With no retained
 * base at all nothing goes: the log is useless without one, but keeping it until the next base backup exists loses
 * nothing that a deletion by mistake would make unrecoverable, and the next pass prunes it.
 */
export function piecesToPrune(kind: ChangeLogKind, bases: Pick<RecordedBase, 'startSegment' | 'timeline'>[], pieces: ArchivedPiece[]): PrunablePiece[] {
  const starts = new Map<number, { position: bigint; segment: string }>();
  for (const base of bases) {
    const position = logPosition(kind, base.startSegment);
    // A base whose start the engine cannot read makes its timeline untouchable.
    if (position === null) return [];
    const current = starts.get(base.timeline);
    if (!current || position < current.position) starts.set(base.timeline, { position, segment: base.startSegment });
  }
  if (starts.size === 0) return [];
  const oldestTimeline = Math.min(...starts.keys());
  const prunable: PrunablePiece[] = [];
  for (const piece of pieces) {
    const position = logPosition(kind, piece.name);
    if (position === null) continue;
    const start = starts.get(piece.timeline);
    if (start && position < start.position) prunable.push({ piece, reason: `before ${start.segment}, the start of the oldest retained base backup` });
    else if (!start && piece.timeline < oldestTimeline) prunable.push({ piece, reason: `timeline ${piece.timeline} precedes every retained base backup` });
  }
  return prunable;
}

/** Outcome of one prune. */
export interface WalPruneResult {
  /** Pieces deleted from every destination that held them (and from `change_log_segments`). */
  deleted: string[];
  /** Pieces a destination still holds under an object lock: kept, retried on the next prune. */
  locked: string[];
  errors: string[];
}

/**
 * Deletes the archived pieces of `jobId` that no retained base backup needs, from each destination in `storages`
 * that holds them, then from the table. A destination that refuses (object lock: LOCKED; or any error) keeps its
 * copy and stays in the piece's row, so the next prune tries again; a destination the job no longer has is kept in
 * the row too (nothing here can reach it). Never throws for a single piece.
 */
export async function pruneChangeLog(
  deps: { store: ChangeLogStore; storages: StorageInstance[]; logger: { info(message: string): void; warn(message: string): void } },
  jobId: string,
): Promise<WalPruneResult> {
  const result: WalPruneResult = { deleted: [], locked: [], errors: [] };
  const retained = await deps.store.basesOf(jobId);
  // The log kind of the newest base; a job's pieces are of one kind (its source's).
  const kind = retained.at(-1)?.logKind;
  if (!kind) return result;
  const prunable = piecesToPrune(kind, retained.filter((base) => base.logKind === kind), await deps.store.piecesOf(jobId));
  const finished: number[] = [];
  for (const { piece, reason } of prunable) {
    const remaining: string[] = [];
    let isLocked = false;
    for (const configId of piece.destinations) {
      const storage = deps.storages.find((candidate) => candidate.configId === configId);
      if (!storage) {
        remaining.push(configId);
        continue;
      }
      try {
        await storage.adapter.delete(piece.storageKey);
      } catch (error) {
        remaining.push(configId);
        if (isAdapterError(error) && error.code === 'LOCKED') {
          isLocked = true;
          continue;
        }
        const message = `WAL retention on ${storage.name}: could not delete ${piece.storageKey}: ${error instanceof Error ? error.message : String(error)}`;
        result.errors.push(message);
        deps.logger.warn(message);
      }
    }
    if (isLocked) result.locked.push(piece.storageKey);
    if (remaining.length === 0) {
      finished.push(piece.id!);
      result.deleted.push(piece.storageKey);
      continue;
    }
    if (remaining.length < piece.destinations.length) await deps.store.setPieceDestinations(piece.id!, remaining);
    deps.logger.info(`WAL retention: ${piece.storageKey} (${reason}) is kept on ${remaining.length} destination(s) and retried later`);
  }
  await deps.store.deletePieces(finished);
  if (result.deleted.length > 0) deps.logger.info(`WAL retention: deleted ${result.deleted.length} archived piece(s) no retained base backup needs`);
  return result;
}
