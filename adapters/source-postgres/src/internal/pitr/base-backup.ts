// A physical base backup of the whole cluster: `pg_basebackup -D - -Ft -X none`, the tar of the base tablespace on
// stdout, passed through the one-pass pipeline as it comes. No WAL is included (-X none): the WAL stream archives it,
// and a restore fetches from the backup's start segment on. What the backup records about itself is read from the
// tar as it passes (backup_label: start LSN and timeline; backup_manifest, the last member: the end LSN), never by
// holding the stream, and from a replication connection opened first (system identifier, version, segment size).
import { Readable } from 'node:stream';
import { AdapterError, awaitFirstByte, isAbortError, type BaseBackupHandle, type BaseBackupInfo, type BaseBackupStats } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../../config.js';
import { ORIGIN, scrub, withClient } from '../connection.js';
import { startTool, type ToolProcess } from '../tool-process.js';
import { identifyServer, type ServerIdentity } from './replication-client.js';
import { TarMemberWatcher } from './tar-members.js';
import { formatLsn, parseLsn, segmentNameFor } from './wal-names.js';

/** `-D -` needs tar format; `-X none` leaves the WAL to the stream; a fast checkpoint starts the backup at once. */
const BASE_BACKUP_ARGS = ['-D', '-', '-Ft', '-X', 'none', '--checkpoint=fast', '-v', '--label=holdfast base backup'];

/**
 * Starts pg_basebackup and waits for its first byte (the checkpoint is done then), so a refused connection or a
 * cluster with extra tablespaces rejects here, before anything is uploaded. `done` rejects when pg_basebackup fails,
 * even after bytes were produced, and when the tar did not say where the backup starts and ends.
 *
 * `stats.databases` is empty: a base backup holds the whole cluster, not a list of databases (an empty list also
 * keeps per-database steps such as test-restore figures away from it).
 */
export async function startBaseBackup(config: PostgresSourceConfig, signal: AbortSignal): Promise<BaseBackupHandle> {
  // Connecting first explains a refusal (privilege, pg_hba.conf line) in the replication check's sentences.
  const server = await identifyServer(config);
  const startedAt = new Date();
  const args = [...BASE_BACKUP_ARGS, '--host', config.host, '--port', String(config.port), '--username', config.user, '--no-password'];
  const tool = await startTool(config, undefined, 'pg_basebackup', args, signal);
  const tar = new TarMemberWatcher({ backup_label: { limit: 16_384, from: 'head' }, backup_manifest: { limit: 65_536, from: 'tail' } });
  const progress = verboseProgress(tool);

  let bytes = 0;
  let settle!: { resolve: (stats: BaseBackupStats) => void; reject: (error: unknown) => void };
  const done = new Promise<BaseBackupStats>((resolve, reject) => (settle = { resolve, reject }));
  done.catch(() => undefined);
  const stream = Readable.from(
    (async function* passThrough() {
      try {
        for await (const chunk of tool.stdout) {
          const piece = chunk as Buffer;
          tar.push(piece);
          bytes += piece.length;
          yield piece;
        }
        const code = await tool.exited;
        if (code !== 0) throw await baseBackupFailure(config, code, tool.stderrTail(), signal);
        const base = describeBackup(server, tar, progress, startedAt);
        settle.resolve({ bytes, databases: [], warnings: progress.warnings, engineVersion: server.serverVersion, base });
      } catch (error) {
        const failure = signal.aborted || isAbortError(error) ? new AdapterError(ORIGIN, 'ABORTED', 'base backup was aborted') : error;
        settle.reject(failure);
        throw failure;
      } finally {
        await tool.stop();
      }
    })(),
    { objectMode: false, highWaterMark: 1024 * 1024 },
  );
  // As in the logical dump: a consumer that stops, or an abort with nobody reading, destroys the stream, which runs
  // the generator's finally (pg_basebackup is killed) and settles `done`.
  const onAbort = () => stream.destroy(stream.listenerCount('error') > 0 ? new AdapterError(ORIGIN, 'ABORTED', 'base backup was aborted') : undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  stream.once('close', () => {
    signal.removeEventListener('abort', onAbort);
    if (!stream.readableEnded) settle.reject(new AdapterError(ORIGIN, 'ABORTED', 'base backup stream closed before it ended'));
  });
  try {
    await awaitFirstByte(stream, signal);
  } catch (error) {
    stream.destroy();
    throw error;
  }
  return { stream, done, extension: '.tar' };
}

/** What pg_basebackup -v says on stderr besides errors. */
interface VerboseProgress {
  start?: { lsn: string; timeline: number };
  end?: { lsn: string; at: Date };
  warnings: string[];
}

/**
 * Follows pg_basebackup's verbose stderr. With -X none, PostgreSQL 15 does not print the WAL start and end points
 * (it does with -X fetch/stream); they are read when present, the tar is the source otherwise. Warnings are kept; the
 * NOTICE that WAL archiving is off is expected (the stream archives the WAL) and dropped.
 */
function verboseProgress(tool: ToolProcess): VerboseProgress {
  const progress: VerboseProgress = { warnings: [] };
  let pending = '';
  tool.onStderr?.((text) => {
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const start = /write-ahead log start point: (\S+) on timeline (\d+)/.exec(line);
      if (start) progress.start = { lsn: start[1]!, timeline: Number(start[2]) };
      const end = /write-ahead log end point: (\S+)/.exec(line);
      if (end) progress.end = { lsn: end[1]!, at: new Date() };
      if (/^(pg_basebackup: warning:|WARNING:)/.test(line.trim())) progress.warnings.push(line.trim());
    }
  });
  return progress;
}

/** Turns pg_basebackup's failure into a coded error without the password. */
async function baseBackupFailure(config: PostgresSourceConfig, code: number | null, stderr: string, signal: AbortSignal): Promise<AdapterError> {
  if (signal.aborted) return new AdapterError(ORIGIN, 'ABORTED', 'base backup was aborted');
  const text = scrub(stderr, config);
  const tablespaces = /can only write single tablespace to stdout, database has (\d+)/.exec(text);
  if (tablespaces) {
    // pg_basebackup counts the base tablespace with the others; their names help the operator (best effort).
    const names = await withClient(config, config.maintenanceDatabase, async (client) => {
      const { rows } = await client.query<{ spcname: string }>("SELECT spcname FROM pg_tablespace WHERE spcname NOT IN ('pg_default', 'pg_global') ORDER BY spcname");
      return rows.map((row) => `"${row.spcname}"`);
    }).catch(() => []);
    const which = names.length > 0 ? ` (${names.join(', ')})` : '';
    return new AdapterError(
      ORIGIN,
      'CONFIG',
      `the cluster on ${config.host}:${config.port} has ${Number(tablespaces[1]) - 1} tablespace(s)${which} besides pg_default and pg_global; physical mode backs up clusters whose data lives in those two only (pg_basebackup writes one tar per tablespace and cannot put several on stdout): move the tables of the other tablespaces to pg_default, or use mode "logical"`,
    );
  }
  const auth = /password authentication failed|no pg_hba\.conf entry|must be superuser or replication role|permission denied/i.test(text);
  return new AdapterError(ORIGIN, auth ? 'AUTH' : 'TRANSIENT', `pg_basebackup failed (exit ${String(code)}): ${text}`);
}

/** Start and stop of the backup from the tar (backup_label, backup_manifest) and the verbose output. */
export function describeBackup(server: ServerIdentity, tar: TarMemberWatcher, progress: VerboseProgress, startedAt: Date): BaseBackupInfo {
  const label = tar.member('backup_label')?.toString('utf8');
  const labelStart = label ? /^START WAL LOCATION: (\S+)/m.exec(label)?.[1] : undefined;
  const labelTimeline = label ? /^START TIMELINE: (\d+)/m.exec(label)?.[1] : undefined;
  const startText = labelStart ?? progress.start?.lsn;
  const timeline = labelTimeline ? Number(labelTimeline) : (progress.start?.timeline ?? server.timeline);
  // The manifest's WAL-Ranges (PostgreSQL 13+) end with the backup's end LSN; with a timeline switch during the backup
  // (a standby promoted) there are several ranges and the last one ends the backup.
  const manifest = tar.member('backup_manifest')?.toString('utf8');
  const manifestEnds = manifest ? [...manifest.matchAll(/"End-LSN":\s*"([0-9A-Fa-f]+\/[0-9A-Fa-f]+)"/g)].map((match) => match[1]!) : [];
  const stopText = manifestEnds.at(-1) ?? progress.end?.lsn;
  if (!startText || !stopText) {
    const missing = !startText ? 'backup_label (the start position)' : 'backup_manifest (the end position; PostgreSQL 13 or later writes it)';
    throw new AdapterError(ORIGIN, 'TRANSIENT', `the base backup's tar has no ${missing}; it cannot be restored to a point in time`);
  }
  const start = parseLsn(startText);
  // The server sends the manifest after it ended the backup: the time its header went by is at or after the end,
  // so no restore target before it is offered (the earliest consistent instant, conservatively).
  const consistentAt = progress.end?.at ?? tar.timeOf('backup_manifest') ?? new Date();
  return {
    logKind: 'postgres-wal',
    startPosition: formatLsn(start),
    stopPosition: formatLsn(parseLsn(stopText)),
    startSegment: segmentNameFor(start, timeline, server.walSegmentSize),
    timeline,
    systemId: server.systemId,
    serverVersion: server.serverVersion,
    startedAt,
    consistentAt,
  };
}
