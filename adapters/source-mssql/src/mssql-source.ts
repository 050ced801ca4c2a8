import type { Readable } from 'node:stream';
import {
  inject,
  injectable,
  TOKENS,
  type AdapterContext,
  type DumpHandle,
  type DumpOptions,
  type HealthResult,
  type RestoreOptions,
  type RestoreResult,
  type SourceAdapter,
  type SourceVersion,
} from '@holdfast/sdk';
import type { MssqlSourceConfig } from './config.js';
import { openBackupFiles } from './internal/backup-files.js';
import { readDatabases, readVersion } from './internal/catalog.js';
import { startDump } from './internal/dump.js';
import { restoreBackup } from './internal/restore.js';
import { MssqlSession } from './internal/session.js';
import { resolveBackupSshTarget } from './internal/ssh.js';

/**
 * Backs up one SQL Server database with BACKUP DATABASE ... TO DISK into the server's backup directory, streams the
 * `.bak` out over SFTP (or from a shared mount) and deletes it; restores by uploading the `.bak` the same way and
 * running RESTORE DATABASE ... WITH MOVE. Only SQL and SFTP travel: nothing runs as a child process.
 */
@injectable()
export class MssqlSource implements SourceAdapter {
  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: MssqlSourceConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  /** Logs in, reads the version and reaches the backup directory: a green check means a backup can run. */
  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      const version = await this.withSession((session) => readVersion(session));
      const files = await openBackupFiles(this.config, resolveBackupSshTarget(this.config, this.context), this.context.localPaths);
      try {
        await files.probe();
      } finally {
        await files.close();
      }
      const edition = version.edition ? ` ${version.edition}` : '';
      return {
        ok: true,
        message: `SQL Server ${version.version}${edition} at ${this.config.host}:${this.config.port}; backup files via ${files.location}`,
        latencyMs: Date.now() - started,
        version: version.version,
      };
    } catch (error) {
      return { ok: false, message: (error as Error).message, latencyMs: Date.now() - started };
    }
  }

  detectVersion(): Promise<SourceVersion> {
    return this.withSession((session) => readVersion(session));
  }

  /** User databases: sys.databases minus master, tempdb, model and msdb. */
  async listDatabases(): Promise<string[]> {
    return [...(await this.withSession((session) => readDatabases(session))).keys()];
  }

  // async: a config error thrown while resolving the SSH login must become a rejection, not a synchronous throw.
  async dump(options: DumpOptions): Promise<DumpHandle> {
    return startDump(this.config, resolveBackupSshTarget(this.config, this.context), options.databases, options.signal, this.context);
  }

  async restore(stream: Readable, options: RestoreOptions): Promise<RestoreResult> {
    return restoreBackup(this.config, resolveBackupSshTarget(this.config, this.context), stream, options, this.context);
  }

  private async withSession<T>(work: (session: MssqlSession) => Promise<T>): Promise<T> {
    const session = await MssqlSession.open(this.config);
    try {
      return await work(session);
    } finally {
      await session.close();
    }
  }
}
