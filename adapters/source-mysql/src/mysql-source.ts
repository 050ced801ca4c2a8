import type { Readable } from 'node:stream';
import type { RowDataPacket } from 'mysql2/promise';
import {
  AdapterError,
  inject,
  injectable,
  resolveSshTarget,
  TOKENS,
  type AdapterContext,
  type DumpHandle,
  type DumpOptions,
  type BaseBackupHandle,
  type HealthResult,
  type PointInTimeSupport,
  type RestoreOptions,
  type RestoreResult,
  type SourceAdapter,
  type SourceVersion,
  type SshTarget,
} from '@holdfast/sdk';
import type { MysqlSourceConfig } from './config.js';
import { isRestoreWorkSchema, ORIGIN, parseVersion, SYSTEM_SCHEMAS, userDatabases, withConnection } from './internal/connection.js';
import { startDump } from './internal/dump.js';
import { remoteQuery } from './internal/remote-query.js';
import { restoreDump } from './internal/restore.js';
import { resolveTools, type ClientTools } from './internal/tools.js';
import { mysqlScratch } from './internal/scratch.js';
import { checkBinlog } from './internal/pitr/binlog-check.js';
import { binlogReadiness } from './internal/pitr/binlog-readiness.js';
import { openBinlogStream } from './internal/pitr/binlog-stream.js';
import { startLogicalBase } from './internal/pitr/logical-base.js';
import { chooseBase, startPhysicalBase } from './internal/pitr/physical-base.js';
import { restoreToPoint } from './internal/pitr/point-restore.js';

/**
 * Backs up MySQL and MariaDB databases with `mariadb-dump`/`mysqldump` and restores them through the client, on the
 * Holdfast host or, in SSH mode, on the `ssh` host (where the client also answers the catalogue queries).
 *
 * In point-in-time mode (`mode: 'point-in-time'`, docs/pitr.md, in progress) test-connection checks what streaming
 * the binary log needs, a backup is the same consistent dump carrying the binary log coordinates of its snapshot
 * (its stats carry `base`), `pointInTime().openChangeLogStream` streams the binary log with mariadb-binlog, and
 * `restoreToPoint` rebuilds one database of a base under a new name and replays the log into it up to the target;
 * `baseMethod` may choose a physical base instead (mariadb-backup of the whole server, restored through a throwaway mariadbd).
 */
@injectable()
export class MysqlSource implements SourceAdapter {
  private tools?: Promise<ClientTools>;

  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: MysqlSourceConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  /** Scratch databases for test restores (`capabilities.scratchRestore`). */
  scratch() {
    return mysqlScratch(this.config);
  }

  /** Point-in-time recovery: logical bases with coordinates, the binary log stream and the restore of one database to an instant; null in logical mode. */
  pointInTime(): PointInTimeSupport | null {
    if (this.config.mode !== 'point-in-time') return null;
    const config = this.config;
    return {
      logKind: 'mysql-binlog',
      // Every user database, like a dump with none named.
      baseBackup: ({ signal }) => this.dumpWithCoordinates([], signal),
      // The source's own binlogFlushIntervalSeconds sets the partial interval: the operator tunes it per server.
      openChangeLogStream: (options) => openBinlogStream(config, { ...options, flushIntervalMs: config.binlogFlushIntervalSeconds * 1000 }),
      restoreToPoint: (input) => this.clientTools().then((tools) => restoreToPoint(config, tools, input)),
      // What test-connection checks, for the catalog's refusal to save a job this server cannot serve.
      readiness: ({ signal }) => binlogReadiness(config, signal),
    };
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      const found = await this.detectVersion();
      const via = this.config.ssh ? ` over SSH via ${this.config.ssh.host}:${this.config.ssh.port}` : '';
      const connected = `Connected to ${found.edition ?? 'MySQL'} ${found.version}${via}`;
      if (this.config.mode === 'point-in-time') return { ...(await this.binlogResult(connected)), latencyMs: Date.now() - started, version: found.version };
      return { ok: true, message: connected, latencyMs: Date.now() - started, version: found.version };
    } catch (error) {
      return { ok: false, message: (error as Error).message, latencyMs: Date.now() - started };
    }
  }

  /** Point-in-time mode: what streaming the binary log needs, one sentence per missing piece, warnings after. */
  private async binlogResult(connected: string): Promise<{ ok: boolean; message: string }> {
    const check = await checkBinlog(this.config);
    const warnings = check.warnings.length > 0 ? ` Warning: ${check.warnings.join(' ')}` : '';
    if (check.ready) {
      return { ok: true, message: `${connected}; ready for point-in-time recovery (binary log ${check.binlogs.at(-1)}, binlog_format ${check.binlogFormat}, server_id ${check.serverId}, the binary log dump accepted).${warnings}` };
    }
    return { ok: false, message: `${connected}, but point-in-time recovery is not possible yet: ${check.problems.join(' ')}${warnings}` };
  }

  async detectVersion(): Promise<SourceVersion> {
    const { version, edition } = await this.catalogue(false);
    return { version, edition };
  }

  async listDatabases(): Promise<string[]> {
    return (await this.catalogue(true)).existing;
  }

  /** The user databases with their data plus index length (information_schema.tables); an empty one is 0 bytes. */
  async databaseSizes(): Promise<Array<{ name: string; sizeBytes: number }>> {
    const existing = await this.listDatabases();
    const query = 'SELECT table_schema, COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables GROUP BY table_schema';
    const ssh = this.sshTarget();
    const rows: Array<[string, number]> = ssh
      ? (await remoteQuery(this.config, ssh, await this.clientTools(), query)).map((fields) => [fields[0]!, Number(fields[1] ?? 0)])
      : await withConnection(this.config, async (connection) => {
          const [found] = await connection.query<RowDataPacket[]>(query.replace('table_schema, COALESCE', 'table_schema AS name, COALESCE').replace('0) FROM', '0) AS size FROM'));
          return found.map((row) => [String(row.name), Number(row.size)] as [string, number]);
        });
    const sizes = new Map(rows);
    return existing.map((name) => ({ name, sizeBytes: sizes.get(name) ?? 0 }));
  }

  async dump(options: DumpOptions): Promise<DumpHandle> {
    // Everything that can fail at start is checked first (tool, connection, databases, users support), so such a
    // failure rejects before any byte exists.
    const tools = await this.clientTools();
    const { version, edition, existing } = await this.catalogue(true);
    const databases = options.databases.length > 0 ? [...options.databases] : existing;
    const missing = databases.filter((name) => !existing.includes(name));
    if (missing.length > 0) {
      throw new AdapterError(ORIGIN, 'NOT_FOUND', `unknown database ${missing.map((name) => `"${name}"`).join(', ')} on ${this.config.host}:${this.config.port}`);
    }
    if (databases.length === 0) throw new AdapterError(ORIGIN, 'NOT_FOUND', 'the server has no user database to back up');
    if (this.config.includeUsers && (edition !== 'MariaDB' || !tools.isMariadb)) {
      throw new AdapterError(ORIGIN, 'UNSUPPORTED', 'includeUsers needs a MariaDB server and mariadb-dump (--system=users); MySQL has no portable account dump');
    }
    this.context.logger.info({ databases, version, edition, tool: tools.dump, mode: this.config.mode }, 'starting dump');
    // A point-in-time source's backup is a base: the same dump, with the binary log coordinates of its snapshot.
    if (this.config.mode === 'point-in-time') {
      // baseMethod picks the kind (physical: mariadb-backup of the whole server; logical: the dump with coordinates).
      const choice = await chooseBase(this.config);
      this.context.logger.info({ baseKind: choice.kind, reason: choice.reason }, 'point-in-time base backup');
      if (choice.kind === 'physical') return startPhysicalBase(this.config, choice.tools!, options.signal);
      return startLogicalBase(this.config, tools, databases, options.signal);
    }
    return startDump(this.config, this.sshTarget(), tools, databases, options.signal, version);
  }

  /** A base backup of `databases` (every user database when empty), through the same checks as `dump()`. */
  private async dumpWithCoordinates(databases: string[], signal: AbortSignal): Promise<BaseBackupHandle> {
    return (await this.dump({ databases, signal })) as BaseBackupHandle;
  }

  async restore(stream: Readable, options: RestoreOptions): Promise<RestoreResult> {
    return restoreDump(this.config, this.sshTarget(), await this.clientTools(), stream, options.target, options.signal, options.overwrite);
  }

  /** Version, edition and (when asked) the user databases: through the driver, or the remote client in SSH mode. */
  private async catalogue(withDatabases: boolean): Promise<{ version: string; edition: string; existing: string[] }> {
    const ssh = this.sshTarget();
    if (ssh) {
      const tools = await this.clientTools();
      const [row] = await remoteQuery(this.config, ssh, tools, 'SELECT VERSION(), @@version_comment');
      if (!row) throw new AdapterError(ORIGIN, 'TRANSIENT', `the client on ${ssh.host} answered no version`);
      const existing = withDatabases
        ? (await remoteQuery(this.config, ssh, tools, 'SHOW DATABASES'))
            .map((fields) => fields[0]!)
            .filter((name) => !(SYSTEM_SCHEMAS as readonly string[]).includes(name.toLowerCase()) && !isRestoreWorkSchema(name))
            .sort()
        : [];
      return { ...parseVersion(row[0]!, row[1] ?? ''), existing };
    }
    return withConnection(this.config, async (connection) => {
      const [rows] = await connection.query<RowDataPacket[]>('SELECT VERSION() AS version, @@version_comment AS comment');
      const found = parseVersion(String(rows[0]!.version), String(rows[0]!.comment ?? ''));
      return { ...found, existing: withDatabases ? await userDatabases(connection) : [] };
    });
  }

  /** The SSH login in SSH mode (undefined in local mode). */
  private sshTarget(): SshTarget | undefined {
    return resolveSshTarget(ORIGIN, this.config, this.context, this.config.connectTimeoutSeconds);
  }

  private clientTools(): Promise<ClientTools> {
    // Found once per instance; a failed lookup is retried next time (the admin may install the tools meanwhile).
    this.tools ??= resolveTools(this.config, this.sshTarget()).catch((error: unknown) => {
      this.tools = undefined;
      throw error;
    });
    return this.tools;
  }
}
