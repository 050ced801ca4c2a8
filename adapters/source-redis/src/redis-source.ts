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
  toDumpHandle,
  peekHead,
} from '@holdfast/sdk';
import type { RedisSourceConfig } from './config.js';
import { ORIGIN, parseKeyspace, parseServerInfo, withClient } from './internal/connection.js';
import { logicalDump } from './internal/logical-dump.js';
import { isLogicalStream, LOGICAL_MAGIC } from './internal/logical-format.js';
import { logicalRestore } from './internal/logical-restore.js';
import { rdbDump, resolveRedisCli } from './internal/rdb-dump.js';
import { redisScratch } from './internal/scratch.js';

/**
 * Backs up Redis and Valkey: a logical SCAN + DUMP stream (restored by Holdfast) or a whole-server RDB snapshot. In
 * SSH mode the client talks through an SSH port forward and redis-cli (rdb mode) runs on the SSH host.
 */
@injectable()
export class RedisSource implements SourceAdapter {
  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: RedisSourceConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  /** Scratch databases for test restores (`capabilities.scratchRestore`). */
  scratch() {
    return redisScratch(this.config);
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      const found = await this.detectVersion();
      const via = this.config.ssh ? ` over SSH via ${this.config.ssh.host}:${this.config.ssh.port}` : '';
      return { ok: true, message: `Connected to ${found.edition ?? 'Redis'} ${found.version}${via}`, latencyMs: Date.now() - started, version: found.version };
    } catch (error) {
      return { ok: false, message: (error as Error).message, latencyMs: Date.now() - started };
    }
  }

  async detectVersion(): Promise<SourceVersion> {
    return withClient(this.config, this.config.database, async (client) => parseServerInfo(await client.info('server')), this.sshTarget());
  }

  /** Database indexes that hold keys, plus the configured one, as strings ("0", "10"). */
  async listDatabases(): Promise<string[]> {
    const used = await withClient(this.config, this.config.database, async (client) => parseKeyspace(await client.info('keyspace')), this.sshTarget());
    return [...new Set([...used, this.config.database])].sort((a, b) => a - b).map(String);
  }

  async dump(options: DumpOptions): Promise<DumpHandle> {
    const { signal } = options;
    const ssh = this.sshTarget();
    if (this.config.mode === 'rdb') {
      // Tool, login and server are checked first, so such a failure rejects before any byte.
      const cli = await resolveRedisCli(this.config, ssh);
      const { server, used } = await withClient(
        this.config,
        this.config.database,
        async (client) => ({ server: parseServerInfo(await client.info('server')), used: parseKeyspace(await client.info('keyspace')) }),
        ssh,
      );
      this.context.logger.info({ mode: 'rdb', version: server.version }, 'starting redis-cli --rdb');
      return toDumpHandle(rdbDump(this.config, cli, signal, ssh), { origin: ORIGIN, signal, databases: used.map(String), engineVersion: server.version, extension: '.rdb' });
    }
    const databases = options.databases.length > 0 ? options.databases.map(parseIndex) : [this.config.database];
    let server: SourceVersion | undefined;
    // Opening each database checks the login and the index (SELECT fails for an index the server does not have).
    for (const db of databases) server ??= await withClient(this.config, db, async (client) => parseServerInfo(await client.info('server')), ssh);
    for (const db of databases.slice(1)) await withClient(this.config, db, async () => undefined, ssh);
    this.context.logger.info({ mode: 'logical', databases, version: server!.version }, 'starting logical dump');
    return toDumpHandle(logicalDump(this.config, databases, server!, signal, ssh), {
      origin: ORIGIN,
      signal,
      databases: databases.map(String),
      engineVersion: server!.version,
      extension: '.hfredis',
    });
  }

  async restore(stream: Readable, options: RestoreOptions): Promise<RestoreResult> {
    const { head, whole } = await peekHead(stream, LOGICAL_MAGIC.length);
    if (head.length === 0) throw new AdapterError(ORIGIN, 'CONFIG', 'the backup is empty: nothing to restore');
    if (head.subarray(0, 5).toString('latin1') === 'REDIS') {
      whole.destroy();
      throw new AdapterError(
        ORIGIN,
        'UNSUPPORTED',
        'an RDB snapshot cannot be restored into a running server: stop the server, place the file as its dbfilename in its dir (CONFIG GET dir, dbfilename), remove or disable the AOF, and start it',
      );
    }
    if (!isLogicalStream(head)) {
      whole.destroy();
      throw new AdapterError(ORIGIN, 'CONFIG', 'not a Redis backup Holdfast knows (neither an RDB file nor a Holdfast logical stream)');
    }
    return logicalRestore(this.config, whole, options.target, options.signal, this.sshTarget());
  }

  /** The SSH login in SSH mode (undefined in local mode). */
  private sshTarget(): SshTarget | undefined {
    return resolveSshTarget(ORIGIN, this.config, this.context, this.config.connectTimeoutSeconds);
  }
}

/** A job's database name as a Redis index. */
function parseIndex(name: string): number {
  if (!/^\d+$/.test(name) || Number(name) > 1023) {
    throw new AdapterError(ORIGIN, 'CONFIG', `"${name}" is not a Redis database index (0, 1, 2, ...)`);
  }
  return Number(name);
}
