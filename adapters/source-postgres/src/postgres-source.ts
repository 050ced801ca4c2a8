import type { Readable } from 'node:stream';
import {
  AdapterError,
  inject,
  injectable,
  resolveSshTarget,
  TOKENS,
  type AdapterContext,
  type ArchiveRestoreInput,
  type DumpHandle,
  type DumpOptions,
  type HealthResult,
  type PointInTimeSupport,
  type RestoreOptions,
  type RestoreResult,
  type SourceAdapter,
  type SourceVersion,
  type SshTarget,
} from '@holdfast/sdk';
import type { PostgresSourceConfig } from './config.js';
import { assertStandaloneArchive, startArchiveDump } from './internal/archive-dump.js';
import { restoreArchiveSnapshot } from './internal/archive-restore.js';
import { ORIGIN, withClient } from './internal/connection.js';
import { checkReplication } from './internal/replication-check.js';
import { startDump } from './internal/dump.js';
import { quoteLiteral, remoteQuery } from './internal/remote-query.js';
import { restoreDump, type RestoreContext } from './internal/restore.js';
import { isRestoreWorkDatabase } from './internal/staged-restore.js';
import { onceVersion } from './internal/version-guard.js';
import { postgresScratch } from './internal/scratch.js';
import { startBaseBackup } from './internal/pitr/base-backup.js';
import { restoreToPoint } from './internal/pitr/point-restore.js';
import { dropWalStreamSlot, openWalStream } from './internal/pitr/wal-stream.js';
import { replicationReadiness } from './internal/pitr/replication-readiness.js';

/**
 * Backs up PostgreSQL databases with `pg_dump -Fc` and restores them with `pg_restore`, on the Holdfast host or, in
 * SSH mode, on the `ssh` host (where `psql` also answers the catalogue queries: the server may be reachable only there).
 *
 * In physical mode (`mode: 'physical'`, docs/pitr.md) a backup is a base backup of the whole cluster (pg_basebackup),
 * the WAL is streamed by `pointInTime().openChangeLogStream`, and a restore goes to an instant through
 * `pointInTime().restoreToPoint`; the logical restore and scratch databases are refused. The adapter's declared
 * capabilities are static (one definition serves both modes), so they stay those of logical mode.
 */
@injectable()
export class PostgresSource implements SourceAdapter {
  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: PostgresSourceConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  /** Scratch databases for test restores (`capabilities.scratchRestore`); none in physical mode. */
  scratch() {
    if (this.config.mode === 'physical') {
      throw new AdapterError(ORIGIN, 'UNSUPPORTED', 'a physical-mode PostgreSQL source has no scratch databases: its base backups are restored to a point in time into a new data directory, not into a database');
    }
    return postgresScratch(this.config);
  }

  /** Point-in-time recovery: base backups, the WAL stream and restore to an instant; null in logical mode. */
  pointInTime(): PointInTimeSupport | null {
    if (this.config.mode !== 'physical') return null;
    const config = this.config;
    return {
      logKind: 'postgres-wal',
      baseBackup: ({ signal }) => startBaseBackup(config, signal),
      // The source's own walFlushIntervalSeconds sets the partial interval: the operator tunes it per server.
      openChangeLogStream: (options) => openWalStream(config, { ...options, flushIntervalMs: config.walFlushIntervalSeconds * 1000 }),
      dropChangeLogStream: (streamId) => dropWalStreamSlot(config, streamId),
      restoreToPoint: (input) => restoreToPoint(config, input),
      // What test-connection checks, for the catalog's refusal to save a job this server cannot serve.
      readiness: ({ signal }) => replicationReadiness(config, signal),
    };
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      const { version } = await this.detectVersion();
      const via = this.config.ssh ? ` over SSH via ${this.config.ssh.host}:${this.config.ssh.port}` : '';
      const connected = `Connected to PostgreSQL ${version}${via}`;
      if (this.config.checkReplication || this.config.mode === 'physical') return { ...(await this.replicationResult(connected)), latencyMs: Date.now() - started, version };
      return { ok: true, message: connected, latencyMs: Date.now() - started, version };
    } catch (error) {
      return { ok: false, message: (error as Error).message, latencyMs: Date.now() - started };
    }
  }

  /** With `checkReplication`: what point-in-time recovery will need, one sentence per missing piece. */
  private async replicationResult(connected: string): Promise<{ ok: boolean; message: string }> {
    // The replication connection is opened from the Holdfast host, which in SSH mode may not reach the server.
    if (this.config.ssh) return { ok: true, message: `${connected}; the replication check does not run in SSH mode` };
    const check = await checkReplication(this.config);
    const warnings = check.warnings.length > 0 ? ` Warning: ${check.warnings.join(' ')}` : '';
    if (check.ready) return { ok: true, message: `${connected}; ready for point-in-time recovery (wal_level ${check.walLevel}, replication connection accepted).${warnings}` };
    return { ok: false, message: `${connected}, but point-in-time recovery is not possible yet: ${check.problems.join(' ')}${warnings}` };
  }

  async detectVersion(): Promise<SourceVersion> {
    const ssh = this.sshTarget();
    if (ssh) {
      const [row] = await remoteQuery(this.config, ssh, this.config.maintenanceDatabase, `SELECT current_setting(${quoteLiteral('server_version')}), version()`);
      if (!row || row.length < 2) throw new AdapterError(ORIGIN, 'TRANSIENT', `psql on ${ssh.host} answered no version`);
      return { version: row[0]!.split(' ')[0]!, edition: row[1]!.split(',')[0] };
    }
    return withClient(this.config, this.config.maintenanceDatabase, async (client) => {
      const result = await client.query<{ server_version: string; version: string }>(
        'SELECT current_setting($1) AS server_version, version() AS version',
        ['server_version'],
      );
      const row = result.rows[0]!;
      return { version: row.server_version.split(' ')[0]!, edition: row.version.split(',')[0] };
    });
  }

  async listDatabases(): Promise<string[]> {
    const ssh = this.sshTarget();
    if (ssh) {
      const rows = await remoteQuery(this.config, ssh, this.config.maintenanceDatabase, 'SELECT datname FROM pg_database WHERE NOT datistemplate AND datallowconn ORDER BY datname');
      return rows.map((row) => row[0]!).filter((name) => !isRestoreWorkDatabase(name));
    }
    return withClient(this.config, this.config.maintenanceDatabase, async (client) => {
      const result = await client.query<{ datname: string }>(
        'SELECT datname FROM pg_database WHERE NOT datistemplate AND datallowconn ORDER BY datname',
      );
      // A restore's staging database (or one a crash left) is never a database to back up.
      return result.rows.map((row) => row.datname).filter((name) => !isRestoreWorkDatabase(name));
    });
  }

  /** The databases `listDatabases` returns, with `pg_database_size` of each. */
  async databaseSizes(): Promise<Array<{ name: string; sizeBytes: number }>> {
    const query = 'SELECT datname, pg_database_size(datname) FROM pg_database WHERE NOT datistemplate AND datallowconn ORDER BY datname';
    const ssh = this.sshTarget();
    const rows: Array<[string, number]> = ssh
      ? (await remoteQuery(this.config, ssh, this.config.maintenanceDatabase, query)).map((row) => [row[0]!, Number(row[1] ?? 0)])
      : await withClient(this.config, this.config.maintenanceDatabase, async (client) => {
          const result = await client.query<{ datname: string; size: string }>(query.replace('pg_database_size(datname)', 'pg_database_size(datname)::text AS size'));
          return result.rows.map((row) => [row.datname, Number(row.size)] as [string, number]);
        });
    return rows.filter(([name]) => !isRestoreWorkDatabase(name)).map(([name, sizeBytes]) => ({ name, sizeBytes }));
  }

  async dump(options: DumpOptions): Promise<DumpHandle> {
    // A scheduled run of a physical-mode source takes a base backup through the same pipeline; its stats carry `base`.
    if (this.config.mode === 'physical') {
      if (options.archive) {
        throw new AdapterError(ORIGIN, 'UNSUPPORTED', 'a physical-mode PostgreSQL source writes base backups (a tar of the cluster), not seekable archives: turn the seekable archive off for this job');
      }
      this.context.logger.info({ host: this.config.host, port: this.config.port }, 'starting pg_basebackup');
      return startBaseBackup(this.config, options.signal);
    }
    if (options.archive) assertStandaloneArchive(options.archive);
    // Connecting first gives a clear error (wrong password, unknown host) before pg_dump produces any byte.
    const { version } = await this.detectVersion();
    const databases = options.databases.length > 0 ? [...options.databases] : await this.listDatabases();
    if (databases.length === 0) throw new AdapterError(ORIGIN, 'NOT_FOUND', 'the server has no database to back up');
    // pg_dump of a missing database fails only when its turn comes: after the databases before it were uploaded, and
    // as a TRANSIENT tool failure. Checked here, it is a NOT_FOUND before the first byte.
    if (options.databases.length > 0) await this.assertDatabasesExist(databases);
    if (options.archive) {
      this.context.logger.info({ databases, version, archive: options.archive.archiveName, compression: options.archive.compression }, 'starting pg_dump into a seekable archive');
      const plan = { config: this.config, ssh: this.sshTarget(), databases, request: options.archive, engineOptions: options.engineOptions, signal: options.signal, engineVersion: version };
      return startArchiveDump(plan);
    }
    this.context.logger.info({ databases, version }, 'starting pg_dump');
    return startDump(this.config, this.sshTarget(), databases, options.engineOptions, options.signal, version);
  }

  async restore(stream: Readable, options: RestoreOptions): Promise<RestoreResult> {
    if (this.config.mode === 'physical') {
      throw new AdapterError(ORIGIN, 'UNSUPPORTED', 'a physical base backup is restored to a point in time (restore with a recovery target), not into a database');
    }
    return restoreDump(this.restoreContext(options), stream, options.target);
  }

  /** Restores the database dumps of a seekable archive (all, or those `include` names), globals first. */
  async restoreArchive(input: ArchiveRestoreInput, options: RestoreOptions): Promise<RestoreResult> {
    if (this.config.mode === 'physical') throw new AdapterError(ORIGIN, 'UNSUPPORTED', 'a physical-mode PostgreSQL source has no seekable archives to restore');
    return restoreArchiveSnapshot(this.restoreContext(options), input, options.target);
  }

  private restoreContext({ signal, overwrite }: RestoreOptions): RestoreContext {
    return {
      config: this.config,
      ssh: this.sshTarget(),
      signal,
      overwrite,
      targetVersion: onceVersion(async () => (await this.detectVersion()).version),
      warnings: [],
      note: (message) => this.context.logger.info({ adapter: 'source-postgres' }, message),
    };
  }

  /** Rejects with NOT_FOUND naming every database of `wanted` the server does not have. */
  private async assertDatabasesExist(wanted: string[]): Promise<void> {
    const sql = 'SELECT datname FROM pg_database ORDER BY datname';
    const ssh = this.sshTarget();
    const existing = new Set(
      ssh
        ? (await remoteQuery(this.config, ssh, this.config.maintenanceDatabase, sql)).map((row) => row[0]!)
        : await withClient(this.config, this.config.maintenanceDatabase, async (client) => (await client.query<{ datname: string }>(sql)).rows.map((row) => row.datname)),
    );
    const missing = wanted.filter((name) => !existing.has(name));
    if (missing.length === 0) return;
    const names = missing.map((name) => `"${name}"`).join(', ');
    throw new AdapterError(ORIGIN, 'NOT_FOUND', `unknown database${missing.length > 1 ? 's' : ''} ${names} on ${this.config.host}:${this.config.port}`);
  }

  /** The SSH login in SSH mode (undefined in local mode); resolved per call so a fixed profile takes effect. */
  private sshTarget(): SshTarget | undefined {
    return resolveSshTarget(ORIGIN, this.config, this.context, this.config.connectTimeoutSeconds);
  }
}
