import type { JobCatalog, PointInTimeFigures, PointInTimeStats } from '@holdfast/kernel';
import type { ChangeLogStore } from './change-log-store.js';
import { kindOfPieceNames } from './log-naming.js';
import { recoveryWindow } from './recovery-window.js';

/** A lag reading older than this is not shown: its stream stopped reporting (a dead process, a stopped job). */
export const LAG_STALE_MS = 5 * 60_000;

/**
 * `TOKENS.PointInTimeStats`: the recoverable window, archive size and slot lag of every job that has an archived
 * change log or a stream, computed from the engine's tables at scrape time (any process answers the same). Jobs the
 * catalog no longer lists are left out; the log kind is the newest base backup's (a job without one: told from its
 * archived pieces' names).
 */
export function pointInTimeStatsPort(ports: { store: () => ChangeLogStore; catalog: () => JobCatalog; now?: () => Date }): PointInTimeStats {
  return {
    async archives(): Promise<PointInTimeFigures[]> {
      const store = ports.store();
      const now = ports.now?.() ?? new Date();
      const [archived, streams] = await Promise.all([store.archivedJobIds(), store.streamFacts()]);
      const jobIds = [...new Set([...archived, ...streams.map((stream) => stream.jobId)])].sort();
      if (jobIds.length === 0) return [];
      const names = await ports.catalog().jobNames(jobIds);
      const figures: PointInTimeFigures[] = [];
      for (const jobId of jobIds) {
        const jobName = names.get(jobId);
        if (jobName === undefined) continue;
        const [bases, pieces] = await Promise.all([store.basesOf(jobId), store.piecesOf(jobId)]);
        const kind = bases.at(-1)?.logKind ?? kindOfPieceNames(pieces.map((piece) => piece.name));
        const computed = recoveryWindow({ kind, bases: bases.filter((base) => base.logKind === kind), pieces, now });
        const stream = streams.find((candidate) => candidate.jobId === jobId);
        const isLagFresh = stream?.lagAt != null && now.getTime() - stream.lagAt.getTime() <= LAG_STALE_MS;
        figures.push({
          jobId,
          jobName,
          windowStart: computed.window?.start ?? null,
          windowEnd: computed.window?.end ?? null,
          recoveryPointSeconds: computed.recoveryPointSeconds,
          segments: computed.segments,
          storedBytes: computed.storedBytes,
          slotLagBytes: isLagFresh ? stream!.lagBytes : null,
        });
      }
      return figures;
    },
  };
}
