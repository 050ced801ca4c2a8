import path from 'node:path';
import type { Readable } from 'node:stream';
import {
  AdapterError,
  inject,
  injectable,
  resolveSshTarget,
  TOKENS,
  type AdapterContext,
  type DumpHandle,
  type DumpOptions,
  type HealthResult,
  type RestoreOptions,
  type RestoreResult,
  type SourceAdapter,
  type SourceVersion,
  type SshTarget,
} from '@holdfast/sdk';
import type { SqliteSourceConfig } from './config.js';
import { startDump } from './internal/dump.js';
import { remoteCheck, restoreRemote, startRemoteDump } from './internal/remote.js';
import { restoreFile } from './internal/restore.js';
import { assertDatabaseFile, cliError, cliVersion, ORIGIN, runCli } from './internal/sqlite-cli.js';
import { sqliteScratch } from './internal/scratch.js';

/**
 * Backs up one SQLite database file with the online backup API and restores it after an integrity check; in SSH
 * mode the file and the sqlite3 CLI are on the `ssh` host and the same steps run there (remote-scripts.ts).
 */
@injectable()
export class SqliteSource implements SourceAdapter {
  private readonly file: string;

  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: SqliteSourceConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {
    // In SSH mode the path is on the remote host: it must be absolute there, the Holdfast host's cwd means nothing.
    this.file = config.ssh ? path.posix.normalize(config.path) : path.resolve(config.path);
  }

  /** Scratch databases for test restores (`capabilities.scratchRestore`). */
  scratch() {
    return sqliteScratch(this.config);
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      const ssh = this.sshTarget();
      const version = ssh ? await remoteCheck(this.config, ssh, this.file, AbortSignal.timeout(60_000), true) : (await this.detectVersion()).version;
      if (!ssh) await this.assertReadable(new AbortController().signal);
      const where = this.config.ssh ? ` on ${this.config.ssh.host} over SSH` : '';
      return { ok: true, message: `SQLite ${version} reads ${this.file}${where}`, latencyMs: Date.now() - started, version };
    } catch (error) {
      return { ok: false, message: (error as Error).message, latencyMs: Date.now() - started };
    }
  }

  async detectVersion(): Promise<SourceVersion> {
    const ssh = this.sshTarget();
    const signal = new AbortController().signal;
    return { version: ssh ? await remoteCheck(this.config, ssh, undefined, signal) : await cliVersion(this.config, signal), edition: 'SQLite' };
  }

  /** One file, one database: its path. */
  listDatabases(): Promise<string[]> {
    return Promise.resolve([this.file]);
  }

  async dump(options: DumpOptions): Promise<DumpHandle> {
    const ssh = this.sshTarget();
    const resolve = (name: string) => (ssh ? path.posix.normalize(name) : path.resolve(name));
    const unknown = options.databases.filter((name) => resolve(name) !== this.file);
    if (unknown.length > 0) {
      throw new AdapterError(ORIGIN, 'NOT_FOUND', `this source backs up ${this.file} only, not ${unknown.map((name) => `"${name}"`).join(', ')}`);
    }
    if (ssh) {
      const remoteVersion = await remoteCheck(this.config, ssh, this.file, options.signal);
      this.context.logger.info({ file: this.file, version: remoteVersion, host: ssh.host }, 'starting sqlite online backup over SSH');
      return startRemoteDump(this.config, ssh, this.file, options.signal, remoteVersion);
    }
    const version = await cliVersion(this.config, options.signal);
    await assertDatabaseFile(this.file);
    this.context.logger.info({ file: this.file, version }, 'starting sqlite online backup');
    return startDump(this.config, this.file, options.signal, version);
  }

  async restore(stream: Readable, options: RestoreOptions): Promise<RestoreResult> {
    const target = options.target.path ?? options.target.database ?? this.file;
    const ssh = this.sshTarget();
    if (!ssh) return restoreFile(this.config, stream, path.resolve(target), options.signal);
    if (!path.posix.isAbsolute(target)) throw new AdapterError(ORIGIN, 'CONFIG', `in SSH mode the restore target must be an absolute path, not "${target}"`);
    return restoreRemote(this.config, ssh, stream, path.posix.normalize(target), options.signal);
  }

  /** The SSH login in SSH mode (undefined in local mode). */
  private sshTarget(): SshTarget | undefined {
    const ssh = resolveSshTarget(ORIGIN, this.config, this.context, this.config.ssh?.connectTimeoutSeconds);
    if (ssh && !path.posix.isAbsolute(this.config.path)) {
      throw new AdapterError(ORIGIN, 'CONFIG', `in SSH mode path must be absolute on ${ssh.host}, not "${this.config.path}"`);
    }
    return ssh;
  }

  /** Opens the file read-only and reads its schema: proves it exists and is a database. */
  private async assertReadable(signal: AbortSignal): Promise<void> {
    await assertDatabaseFile(this.file);
    const result = await runCli(this.config, ['-readonly', this.file, 'SELECT count(*) FROM sqlite_schema;'], signal);
    if (result.code !== 0) throw cliError(result, 'reading the schema', this.file);
  }
}
