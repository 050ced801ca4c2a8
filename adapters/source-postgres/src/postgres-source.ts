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
import type { PostgresSourceConfig } from './config.js';
import { ORIGIN, withClient } from './internal/connection.js';
import { startDump } from './internal/dump.js';
import { restoreDump } from './internal/restore.js';

/** Backs up PostgreSQL databases with `pg_dump -Fc` and restores them with `pg_restore`. */
@injectable()
export class PostgresSource implements SourceAdapter {
  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: PostgresSourceConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      const { version } = await this.detectVersion();
      return { ok: true, message: `Connected to PostgreSQL ${version}`, latencyMs: Date.now() - started, version };
    } catch (error) {
      return { ok: false, message: (error as Error).message, latencyMs: Date.now() - started };
    }
  }

  async detectVersion(): Promise<SourceVersion> {
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
    return withClient(this.config, this.config.maintenanceDatabase, async (client) => {
      const result = await client.query<{ datname: string }>(
        'SELECT datname FROM pg_database WHERE NOT datistemplate AND datallowconn ORDER BY datname',
      );
      return result.rows.map((row) => row.datname);
    });
  }

  async dump(options: DumpOptions): Promise<DumpHandle> {
    // Connecting first gives a clear error (wrong password, unknown host) before pg_dump produces any byte.
    const { version } = await this.detectVersion();
    const databases = options.databases.length > 0 ? [...options.databases] : await this.listDatabases();
    if (databases.length === 0) throw new AdapterError(ORIGIN, 'NOT_FOUND', 'the server has no database to back up');
    this.context.logger.info({ databases, version }, 'starting pg_dump');
    return startDump(this.config, databases, options.engineOptions, options.signal, version);
  }

  restore(stream: Readable, options: RestoreOptions): Promise<RestoreResult> {
    return restoreDump(this.config, stream, options.target, options.signal);
  }
}
