import path from 'node:path';
import type { Readable } from 'node:stream';
import {
  AdapterError,
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
import type { SqliteSourceConfig } from './config.js';
import { startDump } from './internal/dump.js';
import { restoreFile } from './internal/restore.js';
import { assertDatabaseFile, cliError, cliVersion, ORIGIN, runCli } from './internal/sqlite-cli.js';

/** Backs up one SQLite database file with the online backup API and restores it after an integrity check. */
@injectable()
export class SqliteSource implements SourceAdapter {
  private readonly file: string;

  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: SqliteSourceConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {
    this.file = path.resolve(config.path);
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      const { version } = await this.detectVersion();
      await this.assertReadable(new AbortController().signal);
      return { ok: true, message: `SQLite ${version} reads ${this.file}`, latencyMs: Date.now() - started, version };
    } catch (error) {
      return { ok: false, message: (error as Error).message, latencyMs: Date.now() - started };
    }
  }

  async detectVersion(): Promise<SourceVersion> {
    return { version: await cliVersion(this.config, new AbortController().signal), edition: 'SQLite' };
  }

  /** One file, one database: its path. */
  listDatabases(): Promise<string[]> {
    return Promise.resolve([this.file]);
  }

  async dump(options: DumpOptions): Promise<DumpHandle> {
    const unknown = options.databases.filter((name) => path.resolve(name) !== this.file);
    if (unknown.length > 0) {
      throw new AdapterError(ORIGIN, 'NOT_FOUND', `this source backs up ${this.file} only, not ${unknown.map((name) => `"${name}"`).join(', ')}`);
    }
    const version = await cliVersion(this.config, options.signal);
    await assertDatabaseFile(this.file);
    this.context.logger.info({ file: this.file, version }, 'starting sqlite online backup');
    return startDump(this.config, this.file, options.signal, version);
  }

  restore(stream: Readable, options: RestoreOptions): Promise<RestoreResult> {
    const target = options.target.path ?? options.target.database ?? this.file;
    return restoreFile(this.config, stream, path.resolve(target), options.signal);
  }

  /** Opens the file read-only and reads its schema: proves it exists and is a database. */
  private async assertReadable(signal: AbortSignal): Promise<void> {
    await assertDatabaseFile(this.file);
    const result = await runCli(this.config, ['-readonly', this.file, 'SELECT count(*) FROM sqlite_schema;'], signal);
    if (result.code !== 0) throw cliError(result, 'reading the schema', this.file);
  }
}
