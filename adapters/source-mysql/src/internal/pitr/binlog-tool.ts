// mariadb-binlog (MariaDB's client package) or mysqlbinlog, on the Holdfast host: the binary log stream and the
// replication check both run it, so that what the check accepts is exactly what the stream will do.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { AdapterError } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../../config.js';
import { ORIGIN } from '../connection.js';
import { connectionArgs, type ClientTools } from '../tools.js';

const run = promisify(execFile);

/** The binlog reader found, and its family (its TLS flags follow the MariaDB or the MySQL client). */
export interface BinlogTool {
  command: string;
  isMariadb: boolean;
}

/** Finds `mariadb-binlog` (preferred) or `mysqlbinlog`; rejects with CONFIG when neither runs. */
export async function resolveBinlogTool(config: Pick<MysqlSourceConfig, 'binDirectory'>): Promise<BinlogTool> {
  for (const name of ['mariadb-binlog', 'mysqlbinlog']) {
    const command = config.binDirectory ? path.join(config.binDirectory, name) : name;
    const found = await run(command, ['--version'], { timeout: 10_000 }).catch(() => undefined);
    if (found) return { command, isMariadb: /mariadb/i.test(found.stdout) };
  }
  const where = config.binDirectory ? `in ${config.binDirectory}` : 'on PATH';
  throw new AdapterError(ORIGIN, 'CONFIG', `neither mariadb-binlog nor mysqlbinlog was found ${where} of the Holdfast host; install mariadb-client or set binDirectory`);
}

/** Host, port, user and TLS flags for the binlog reader (after its option-file argument). */
export function binlogConnectionArgs(config: MysqlSourceConfig, tool: BinlogTool): string[] {
  const tools: ClientTools = { dump: tool.command, client: tool.command, isMariadb: tool.isMariadb };
  return connectionArgs(config, tools);
}

/**
 * The replica server id the stream registers with (`--stop-never-slave-server-id`): stable per stream, so a restart
 * replaces its own earlier connection, and high enough not to meet real replicas' usual small ids. A server drops an
 * older dump connection when another registers with the same id.
 */
export function replicaServerIdFor(streamId: string): number {
  let hash = 0x811c9dc5;
  for (const char of streamId) {
    hash ^= char.codePointAt(0)!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return 2_000_000_000 + (hash % 2_000_000_000);
}
