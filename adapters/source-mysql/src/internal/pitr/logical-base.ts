// A logical base backup for point-in-time recovery: the ordinary consistent dump (`--single-transaction`), asked to
// write the binary log coordinates of its snapshot (`--master-data=2`: a commented `CHANGE MASTER TO
// MASTER_LOG_FILE=..., MASTER_LOG_POS=...` line before the data). The
// coordinates are read from the script as it passes, never by holding the stream, and become the backup's
// `BaseBackupInfo`: a restore loads the script, then replays the binary log from exactly that position.
import { PassThrough, Transform, pipeline } from 'node:stream';
import type mysql from 'mysql2/promise';
import { AdapterError, type BaseBackupHandle, type BaseBackupInfo, type BaseBackupStats } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../../config.js';
import { ORIGIN, withConnection } from '../connection.js';
import { startDump } from '../dump.js';
import type { ClientTools } from '../tools.js';
import { formatBinlogPosition } from './binlog-names.js';
import { readBinlogSettings } from './binlog-server.js';

/** The coordinates are among the script's first lines; past this many bytes they are not looked for any more. */
const COORDINATES_WITHIN_BYTES = 4 * 1024 * 1024;
const COORDINATES = /(?:MASTER|SOURCE)_LOG_FILE='([^']+)',\s*(?:MASTER|SOURCE)_LOG_POS=(\d+)/;

/** Binary log coordinates of the dump's snapshot, as the script states them. */
export interface DumpCoordinates {
  file: string;
  position: number;
  /** When the line went through the stream: just after the snapshot was taken. */
  seenAt: Date;
}

/** Watches the head of a dump script for its coordinates; passes every byte on unchanged. */
export class CoordinatesWatcher extends Transform {
  found: DumpCoordinates | undefined;
  private head = '';
  private isDone = false;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null, data?: Buffer) => void): void {
    if (!this.isDone) {
      // latin1 keeps one character per byte: the lines looked for are ASCII, whatever the data around them.
      this.head += chunk.toString('latin1');
      const coordinates = COORDINATES.exec(this.head);
      if (coordinates) {
        this.found = { file: coordinates[1]!, position: Number(coordinates[2]), seenAt: new Date() };
        this.isDone = true;
        this.head = '';
      } else if (this.head.length > COORDINATES_WITHIN_BYTES) {
        this.isDone = true;
        this.head = '';
      }
    }
    callback(null, chunk);
  }
}

/** What identifies the server in the base (`@@server_uuid` on MySQL; host name and server_id on MariaDB). */
export async function serverIdentity(connection: mysql.Connection, serverId: number): Promise<string> {
  const [rows] = await connection.query<mysql.RowDataPacket[]>('SELECT @@hostname AS host');
  const host = String(rows[0]?.host ?? '');
  try {
    const [uuid] = await connection.query<mysql.RowDataPacket[]>('SELECT @@server_uuid AS uuid');
    if (uuid[0]?.uuid) return String(uuid[0].uuid);
  } catch {
    // MariaDB has no server_uuid
  }
  return `${host}:server_id=${serverId}`;
}

/**
 * Starts the dump of `databases` with coordinates and waits for its first byte, so a failure at start (binary
 * logging off, a privilege missing) rejects here. `done` rejects when the script carried no coordinates.
 */
export async function startLogicalBase(config: MysqlSourceConfig, tools: ClientTools, databases: string[], signal: AbortSignal): Promise<BaseBackupHandle> {
  const { settings, systemId } = await withConnection(config, async (connection) => {
    const found = await readBinlogSettings(connection);
    return { settings: found, systemId: await serverIdentity(connection, found.serverId) };
  });
  if (!settings.logBin) {
    throw new AdapterError(ORIGIN, 'CONFIG', `binary logging is off on ${config.host}:${config.port} (log_bin): a point-in-time base backup needs the binary log coordinates of its snapshot`);
  }
  const startedAt = new Date();
  // No --gtid: mariadb-dump prints the GTID position at the end of the script, and BaseBackupInfo has no field for
  // it yet; file and position are what a replay starts from.
  const flags = ['--master-data=2'];
  const handle = await startDump(config, undefined, tools, databases, signal, settings.version, flags);
  const watcher = new CoordinatesWatcher();
  const stream = new PassThrough({ highWaterMark: 1024 * 1024 });
  // pipeline: an error or abort of the dump reaches the consumer, and a consumer that stops destroys the dump.
  pipeline(handle.stream, watcher, stream, () => undefined);
  const done = handle.done.then((stats): BaseBackupStats => {
    const found = watcher.found;
    if (!found) throw new AdapterError(ORIGIN, 'TRANSIENT', `the dump of ${config.host}:${config.port} carried no binary log coordinates (no CHANGE MASTER line): it cannot start a point-in-time restore`);
    const position = formatBinlogPosition(found.file, found.position);
    const base: BaseBackupInfo = {
      logKind: 'mysql-binlog',
      startPosition: position,
      // A logical dump is one snapshot: consistent at the very position it starts from.
      stopPosition: position,
      startSegment: found.file,
      timeline: 1,
      systemId,
      serverVersion: settings.version,
      startedAt,
      consistentAt: found.seenAt,
    };
    return { ...stats, base };
  });
  done.catch(() => undefined);
  return { ...handle, stream, done };
}
