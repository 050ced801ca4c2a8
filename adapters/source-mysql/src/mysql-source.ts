import type { Readable } from 'node:stream';
import type { RowDataPacket } from 'mysql2/promise';
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
import type { MysqlSourceConfig } from './config.js';
import { ORIGIN, parseVersion, userDatabases, withConnection } from './internal/connection.js';
import { startDump } from './internal/dump.js';
import { restoreDump } from './internal/restore.js';
import { resolveTools, type ClientTools } from './internal/tools.js';

/** Backs up MySQL and MariaDB databases with `mariadb-dump`/`mysqldump` and restores them through the client. */
@injectable()
export class MysqlSource implements SourceAdapter {
  private tools?: Promise<ClientTools>;

  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: MysqlSourceConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      const found = await this.detectVersion();
      return { ok: true, message: `Connected to ${found.edition ?? 'MySQL'} ${found.version}`, latencyMs: Date.now() - started, version: found.version };
    } catch (error) {
      return { ok: false, message: (error as Error).message, latencyMs: Date.now() - started };
    }
  }

  async detectVersion(): Promise<SourceVersion> {
    return withConnection(this.config, async (connection) => {
      const [rows] = await connection.query<RowDataPacket[]>('SELECT VERSION() AS version, @@version_comment AS comment');
      const row = rows[0]!;
      return parseVersion(String(row.version), String(row.comment ?? ''));
    });
  }

  async listDatabases(): Promise<string[]> {
    return withConnection(this.config, (connection) => userDatabases(connection));
  }

  async dump(options: DumpOptions): Promise<DumpHandle> {
    // Everything that can fail at start is checked first (tool, connection, databases, users support), so such a
    // failure rejects before any byte exists.
    const tools = await this.clientTools();
    const { version, edition, existing } = await withConnection(this.config, async (connection) => {
      const [rows] = await connection.query<RowDataPacket[]>('SELECT VERSION() AS version, @@version_comment AS comment');
      return { ...parseVersion(String(rows[0]!.version), String(rows[0]!.comment ?? '')), existing: await userDatabases(connection) };
    });
    const databases = options.databases.length > 0 ? [...options.databases] : existing;
    const missing = databases.filter((name) => !existing.includes(name));
    if (missing.length > 0) {
      throw new AdapterError(ORIGIN, 'NOT_FOUND', `unknown database ${missing.map((name) => `"${name}"`).join(', ')} on ${this.config.host}:${this.config.port}`);
    }
    if (databases.length === 0) throw new AdapterError(ORIGIN, 'NOT_FOUND', 'the server has no user database to back up');
    if (this.config.includeUsers && (edition !== 'MariaDB' || !tools.isMariadb)) {
      throw new AdapterError(ORIGIN, 'UNSUPPORTED', 'includeUsers needs a MariaDB server and mariadb-dump (--system=users); MySQL has no portable account dump');
    }
    this.context.logger.info({ databases, version, edition, tool: tools.dump }, 'starting dump');
    return startDump(this.config, tools, databases, options.signal, version);
  }

  async restore(stream: Readable, options: RestoreOptions): Promise<RestoreResult> {
    return restoreDump(this.config, await this.clientTools(), stream, options.target, options.signal);
  }

  private clientTools(): Promise<ClientTools> {
    // Found once per instance; a failed lookup is retried next time (the admin may install the tools meanwhile).
    this.tools ??= resolveTools(this.config).catch((error: unknown) => {
      this.tools = undefined;
      throw error;
    });
    return this.tools;
  }
}
