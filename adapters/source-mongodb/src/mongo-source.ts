import type { Readable } from 'node:stream';
import {
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
  toDumpHandle,
  peekHead,
} from '@holdfast/sdk';
import type { MongoClient } from 'mongodb';
import type { MongoSourceConfig } from './config.js';
import { connect, databaseNames, hostsOf, scrubber, serverVersion, uriWithCredentials } from './internal/connection.js';
import { driverExport } from './internal/driver-dump.js';
import { driverImport } from './internal/driver-restore.js';
import { fromDriverError, mongoError, ORIGIN } from './internal/errors.js';
import { isExportStream } from './internal/format.js';
import { remoteToolPath, remoteToolRuns } from './internal/remote-tool.js';
import { toolExport, toolImport, type ToolSite } from './internal/tool-dump.js';
import { findTool } from './internal/tools.js';

/** First bytes of a mongodump archive: the magic number 0x8199e26d, little-endian. */
const ARCHIVE_MAGIC = Buffer.from([0x6d, 0xe2, 0x99, 0x81]);

/**
 * Backs up MongoDB with mongodump --archive when available, else with the driver in Holdfast's export format. In SSH
 * mode the driver talks through an SSH port forward and the tools run on the SSH host.
 */
@injectable()
export class MongoSource implements SourceAdapter {
  private readonly scrub: (text: string) => string;

  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: MongoSourceConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {
    this.scrub = scrubber(config);
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      const { version, edition } = await this.withClient((client) => serverVersion(client));
      const via = this.config.ssh ? ` over SSH via ${this.config.ssh.host}:${this.config.ssh.port}` : '';
      return { ok: true, message: `${edition} ${version} at ${hostsOf(this.config.uri)}${via}`, latencyMs: Date.now() - started, version };
    } catch (error) {
      return { ok: false, message: (error as Error).message, latencyMs: Date.now() - started };
    }
  }

  async detectVersion(): Promise<SourceVersion> {
    return this.withClient((client) => serverVersion(client));
  }

  async listDatabases(): Promise<string[]> {
    return this.withClient((client) => databaseNames(client));
  }

  async dump(options: DumpOptions): Promise<DumpHandle> {
    const ssh = this.sshTarget();
    const connection = await connect(this.config, ssh);
    const { client } = connection;
    let handedOver = false;
    try {
      const server = await serverVersion(client);
      const existing = await databaseNames(client);
      const databases = options.databases.length > 0 ? [...options.databases] : this.config.database ? [this.config.database] : existing;
      const unknown = databases.filter((name) => !existing.includes(name));
      if (unknown.length > 0) throw mongoError('NOT_FOUND', `unknown database ${unknown.join(', ')} (found: ${existing.join(', ') || 'none'})`);
      const meta = { origin: ORIGIN, signal: options.signal, databases, engineVersion: server.version };
      const tool = await this.tool('mongodump', ssh);
      if (tool) {
        this.context.logger.info({ databases, tool: tool.path, sshHost: ssh?.host }, 'starting mongodump --archive');
        return await toDumpHandle(toolExport(tool, uriWithCredentials(this.config), databases, this.config.includeUsers, options.signal, this.scrub), {
          ...meta,
          extension: '.archive',
        });
      }
      this.context.logger.info({ databases, sshHost: ssh?.host }, 'starting driver export');
      handedOver = true;
      const scrub = this.scrub;
      const plan = { databases, includeUsers: this.config.includeUsers, batchSize: this.config.batchSize, server, signal: options.signal };
      return await toDumpHandle(
        (async function* exported() {
          try {
            yield* driverExport(client, plan);
          } catch (error) {
            throw fromDriverError(error, 'export failed', scrub);
          } finally {
            await connection.close();
          }
        })(),
        { ...meta, extension: '.hfmongo' },
      );
    } catch (error) {
      throw fromDriverError(error, 'dump failed', this.scrub);
    } finally {
      if (!handedOver) await connection.close();
    }
  }

  async restore(stream: Readable, options: RestoreOptions): Promise<RestoreResult> {
    const { head, whole } = await peekHead(stream, 9);
    const { database, databaseMapping } = options.target;
    if (head.subarray(0, 4).equals(ARCHIVE_MAGIC)) {
      const tool = await this.tool('mongorestore', this.sshTarget(), true);
      const mapping = { ...(database && this.config.database ? { [this.config.database]: database } : {}), ...databaseMapping };
      return toolImport(tool!, uriWithCredentials(this.config), whole, { mapping, drop: this.config.dropBeforeRestore, includeUsers: this.config.includeUsers, signal: options.signal }, this.scrub);
    }
    if (!isExportStream(head)) throw mongoError('CONFIG', 'the backup is neither a Holdfast MongoDB export nor a mongodump archive');
    return this.withClient(async (client) => {
      try {
        return await driverImport(client, whole, {
          targetOf: (name) => databaseMapping?.[name] ?? database ?? name,
          dropBeforeRestore: this.config.dropBeforeRestore,
          includeUsers: this.config.includeUsers,
          batchSize: this.config.batchSize,
          signal: options.signal,
        });
      } catch (error) {
        throw fromDriverError(error, 'restore failed', this.scrub);
      }
    });
  }

  /**
   * The tool to use (on the SSH host in SSH mode), or undefined for the driver method; `required` (restoring an
   * archive) makes a missing tool an error.
   */
  private async tool(name: 'mongodump' | 'mongorestore', ssh: SshTarget | undefined, required = false): Promise<ToolSite | undefined> {
    if (this.config.method === 'driver' && !required) return undefined;
    const { binDirectory } = this.config;
    const remotePath = remoteToolPath(name, binDirectory);
    const path = ssh ? ((await remoteToolRuns(ssh, remotePath)) ? remotePath : undefined) : await findTool(name, binDirectory);
    if (!path && (required || this.config.method === 'tools')) {
      const where = `${binDirectory ? `in ${binDirectory}` : 'on PATH'}${ssh ? ` of ${ssh.host}` : ''}`;
      throw mongoError('CONFIG', `${name} was not found ${where}; install the MongoDB Database Tools or set binDirectory`);
    }
    return path ? { path, ssh } : undefined;
  }

  /** The SSH login in SSH mode (undefined in local mode); CONFIG when SSH mode has no usable login. */
  private sshTarget(): SshTarget | undefined {
    return resolveSshTarget(ORIGIN, this.config, this.context, this.config.connectTimeoutSeconds);
  }

  private async withClient<T>(work: (client: MongoClient) => Promise<T>): Promise<T> {
    const connection = await connect(this.config, this.sshTarget());
    try {
      return await work(connection.client);
    } catch (error) {
      throw fromDriverError(error, 'request failed', this.scrub);
    } finally {
      await connection.close();
    }
  }
}
