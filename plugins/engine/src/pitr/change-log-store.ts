import type { OrmDatabase } from '@holdfast/orm-port';
import type { ChangeLogKind } from '@holdfast/kernel';
import type { Knex } from '@mikro-orm/knex';

/** One archived piece of a job's change log (a row of `change_log_segments`). */
export interface ArchivedPiece {
  id?: number;
  jobId: string;
  name: string;
  timeline: number;
  partial: boolean;
  storageKey: string;
  plainSize: number;
  storedSize: number;
  sha256: string;
  coversUntil: Date;
  archivedAt: Date;
  /** Destination (adapter config) ids holding the piece. */
  destinations: string[];
}

/** A base backup of a job as the window needs it (a row of `change_log_bases`). */
export interface RecordedBase {
  executionId: string;
  jobId: string;
  storageKey: string;
  logKind: ChangeLogKind;
  startPosition: string;
  stopPosition: string;
  startSegment: string;
  timeline: number;
  systemId: string;
  serverVersion: string;
  startedAt: Date;
  consistentAt: Date;
  /** Destination ids still holding the base backup. */
  destinations: string[];
}

/** What a job's change-log stream is doing. */
export type StreamState = 'streaming' | 'retrying' | 'stopped' | 'failed';

/** Which process streams a job (a row of `change_log_streams`). */
export interface StreamRecord {
  jobId: string;
  processId: string;
  host: string;
  pid: number;
  since: Date;
  state: StreamState;
  lastError: string | null;
  updatedAt: Date;
}

type Row = Record<string, unknown>;
const ms = (value: unknown) => new Date(Number(value));
const list = (value: unknown): string[] => {
  try {
    const parsed = JSON.parse(String(value)) as unknown;
    return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : [];
  } catch {
    return [];
  }
};

function pieceOf(row: Row): ArchivedPiece {
  return {
    id: Number(row.id),
    jobId: String(row.job_id),
    name: String(row.name),
    timeline: Number(row.timeline),
    // libsql answers booleans as 0/1.
    partial: row.partial === true || Number(row.partial) === 1,
    storageKey: String(row.storage_key),
    plainSize: Number(row.plain_size),
    storedSize: Number(row.stored_size),
    sha256: String(row.sha256),
    coversUntil: ms(row.covers_until),
    archivedAt: ms(row.archived_at),
    destinations: list(row.destinations),
  };
}

function baseOf(row: Row): RecordedBase {
  return {
    executionId: String(row.execution_id),
    jobId: String(row.job_id),
    storageKey: String(row.storage_key),
    logKind: String(row.log_kind) as ChangeLogKind,
    startPosition: String(row.start_position),
    stopPosition: String(row.stop_position),
    startSegment: String(row.start_segment),
    timeline: Number(row.timeline),
    systemId: String(row.system_id),
    serverVersion: String(row.server_version),
    startedAt: ms(row.started_at),
    consistentAt: ms(row.consistent_at),
    destinations: list(row.destinations),
  };
}

/** Reads and writes the engine's change-log tables (see change-log-tables.ts). */
export class ChangeLogStore {
  constructor(private readonly database: OrmDatabase) {}

  private knex(): Knex {
    return this.database.em().getKnex();
  }

  /** Every archived piece of a job, in name order. */
  async piecesOf(jobId: string): Promise<ArchivedPiece[]> {
    const rows: Row[] = await this.knex()('change_log_segments').select('*').where({ job_id: jobId }).orderBy([{ column: 'timeline' }, { column: 'name' }, { column: 'id' }]);
    return rows.map(pieceOf);
  }

  /** The pieces stored under one segment name (its partials and, once done, the completed segment). */
  async piecesNamed(jobId: string, timeline: number, name: string): Promise<ArchivedPiece[]> {
    const rows: Row[] = await this.knex()('change_log_segments').select('*').where({ job_id: jobId, timeline, name }).orderBy('id');
    return rows.map(pieceOf);
  }

  /** Records a piece; a row with the same key (a partial rewritten in place) is replaced. */
  async savePiece(piece: ArchivedPiece): Promise<void> {
    await this.knex().transaction(async (trx) => {
      await trx('change_log_segments').where({ job_id: piece.jobId, storage_key: piece.storageKey }).delete();
      await trx('change_log_segments').insert({
        job_id: piece.jobId,
        name: piece.name,
        timeline: piece.timeline,
        partial: piece.partial,
        storage_key: piece.storageKey,
        plain_size: piece.plainSize,
        stored_size: piece.storedSize,
        sha256: piece.sha256,
        covers_until: piece.coversUntil.getTime(),
        archived_at: piece.archivedAt.getTime(),
        destinations: JSON.stringify(piece.destinations),
      });
    });
  }

  /** The destinations still holding a piece after some of them deleted it (WAL retention). */
  async setPieceDestinations(id: number, destinations: string[]): Promise<void> {
    await this.knex()('change_log_segments').where({ id }).update({ destinations: JSON.stringify(destinations) });
  }

  async deletePieces(ids: number[]): Promise<void> {
    if (ids.length > 0) await this.knex()('change_log_segments').whereIn('id', ids).delete();
  }

  /** Records a base backup the run stored (at `destinations`). */
  async recordBase(base: RecordedBase): Promise<void> {
    await this.knex()('change_log_bases')
      .insert({
        execution_id: base.executionId,
        job_id: base.jobId,
        storage_key: base.storageKey,
        log_kind: base.logKind,
        start_position: base.startPosition,
        stop_position: base.stopPosition,
        start_segment: base.startSegment,
        timeline: base.timeline,
        system_id: base.systemId,
        server_version: base.serverVersion,
        started_at: base.startedAt.getTime(),
        consistent_at: base.consistentAt.getTime(),
        destinations: JSON.stringify(base.destinations),
      })
      .onConflict('execution_id')
      .merge();
  }

  /** Base backups of a job that at least one destination still holds, oldest first. */
  async basesOf(jobId: string): Promise<RecordedBase[]> {
    const rows: Row[] = await this.knex()('change_log_bases').select('*').where({ job_id: jobId }).orderBy('consistent_at');
    return rows.map(baseOf).filter((base) => base.destinations.length > 0);
  }

  /** Retention deleted `keys` from destination `configId`: those base backups are no longer held there. */
  async forgetBasesAt(jobId: string, configId: string, keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    const rows: Row[] = await this.knex()('change_log_bases').select('execution_id', 'destinations').where({ job_id: jobId }).whereIn('storage_key', keys);
    for (const row of rows) {
      const remaining = list(row.destinations).filter((id) => id !== configId);
      await this.knex()('change_log_bases').where({ execution_id: row.execution_id }).update({ destinations: JSON.stringify(remaining) });
    }
  }

  /** Records what this process's stream of a job is doing. */
  async saveStream(record: StreamRecord): Promise<void> {
    const row = {
      job_id: record.jobId,
      process_id: record.processId,
      host: record.host.slice(0, 255),
      pid: record.pid,
      since: record.since.getTime(),
      state: record.state,
      last_error: record.lastError,
      updated_at: record.updatedAt.getTime(),
    };
    await this.knex()('change_log_streams').insert(row).onConflict('job_id').merge();
  }

  /** Records the slot lag the stream reported (gauges; any process reads it). */
  async saveLag(jobId: string, bytes: number, at: Date): Promise<void> {
    await this.knex()('change_log_streams').where({ job_id: jobId }).update({ lag_bytes: bytes, lag_at: at.getTime() });
  }

  /** Remembers which source a job streams from, so its slot can be dropped once the job is gone. */
  async saveStreamSource(jobId: string, sourceConfigId: string): Promise<void> {
    await this.knex()('change_log_streams').where({ job_id: jobId }).update({ source_config_id: sourceConfigId });
  }

  /** Every job that has a stream row, with its last lag and source (gauges, slot clean-up). */
  async streamFacts(): Promise<Array<{ jobId: string; lagBytes: number | null; lagAt: Date | null; sourceConfigId: string | null }>> {
    const rows: Row[] = await this.knex()('change_log_streams').select('job_id', 'lag_bytes', 'lag_at', 'source_config_id');
    return rows.map((row) => ({
      jobId: String(row.job_id),
      lagBytes: row.lag_bytes == null ? null : Number(row.lag_bytes),
      lagAt: row.lag_at == null ? null : ms(row.lag_at),
      sourceConfigId: row.source_config_id == null ? null : String(row.source_config_id),
    }));
  }

  /** Jobs with archived pieces or recorded base backups (gauges). */
  async archivedJobIds(): Promise<string[]> {
    const pieces: Row[] = await this.knex()('change_log_segments').distinct('job_id');
    const bases: Row[] = await this.knex()('change_log_bases').distinct('job_id');
    return [...new Set([...pieces, ...bases].map((row) => String(row.job_id)))];
  }

  /** Forgets a job's stream row (its slot was dropped: the job is gone). */
  async deleteStream(jobId: string): Promise<void> {
    await this.knex()('change_log_streams').where({ job_id: jobId }).delete();
  }

  async streamOf(jobId: string): Promise<StreamRecord | null> {
    const row: Row | undefined = await this.knex()('change_log_streams').select('*').where({ job_id: jobId }).first();
    if (!row) return null;
    return {
      jobId: String(row.job_id),
      processId: String(row.process_id),
      host: String(row.host),
      pid: Number(row.pid),
      since: ms(row.since),
      state: String(row.state) as StreamState,
      lastError: row.last_error == null ? null : String(row.last_error),
      updatedAt: ms(row.updated_at),
    };
  }
}
