import type { ChangeLogKind } from '@holdfast/kernel';

/** Size of a PostgreSQL WAL segment unless the server was built or initialised with another (`wal_segment_size`). */
export const DEFAULT_WAL_SEGMENT_BYTES = 16 * 1024 * 1024;

/**
 * Orders segment names of one change-log kind and tells whether two are neighbours, so the window can find gaps
 * from names alone. `sequence` is a number that grows by one from a segment to the next; null: not a segment name.
 */
export interface LogNaming {
  sequence(name: string): number | null;
  name(sequence: number, like: string): string;
}

const hex8 = (value: number) => value.toString(16).toUpperCase().padStart(8, '0');

/**
 * PostgreSQL: `TTTTTTTTXXXXXXXXYYYYYYYY` (timeline, log id, segment within the log id). A log id holds
 * 0x100000000 / segment size segments (256 with 16 MiB segments), so `...0000000A000000FF` is followed by
 * `...0000000B00000000`.
 */
export function walNaming(segmentBytes = DEFAULT_WAL_SEGMENT_BYTES): LogNaming {
  const perLogId = Math.max(1, Math.floor(0x1_0000_0000 / segmentBytes));
  return {
    sequence(name) {
      if (!/^[0-9A-F]{24}$/i.test(name)) return null;
      const logId = Number.parseInt(name.slice(8, 16), 16);
      const segment = Number.parseInt(name.slice(16, 24), 16);
      return segment >= perLogId ? null : logId * perLogId + segment;
    },
    name(sequence, like) {
      return `${like.slice(0, 8).toUpperCase()}${hex8(Math.floor(sequence / perLogId))}${hex8(sequence % perLogId)}`;
    },
  };
}

/** MySQL/MariaDB binary logs: `<basename>.000123`, numbered one by one. */
export const binlogNaming: LogNaming = {
  sequence(name) {
    const match = /\.(\d+)$/.exec(name);
    return match ? Number(match[1]) : null;
  },
  name(sequence, like) {
    const match = /^(.*\.)(\d+)$/.exec(like);
    return match ? `${match[1]}${String(sequence).padStart(match[2]!.length, '0')}` : String(sequence);
  },
};

/** The naming of a change-log kind. */
export function namingOf(kind: ChangeLogKind, walSegmentBytes?: number): LogNaming {
  return kind === 'mysql-binlog' ? binlogNaming : walNaming(walSegmentBytes);
}

/**
 * The kind of change log a job archived, told from its pieces' names (a WAL name is 24 hex digits; anything else
 * numbered is a binary log), for a job that has no base backup to say it; PostgreSQL when there is nothing to tell.
 */
export function kindOfPieceNames(names: string[]): ChangeLogKind {
  const name = names[0];
  return name !== undefined && !/^[0-9A-F]{24}$/i.test(name) && binlogNaming.sequence(name) !== null ? 'mysql-binlog' : 'postgres-wal';
}

/** The timeline as PostgreSQL writes it in names and the archive's folders (8 upper-case hex digits). */
export function timelineHex(timeline: number): string {
  return hex8(timeline);
}
