import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { AdapterError, isAbortError } from '@holdfast/sdk';
import type { RedisSourceConfig } from '../config.js';
import { ORIGIN, scrub } from './connection.js';
import { startTool, stopTool } from './tool-process.js';

const run = promisify(execFile);

/** Path of redis-cli; rejects with CONFIG when it does not run (checked before the dump starts). */
export async function resolveRedisCli(config: RedisSourceConfig): Promise<string> {
  const cli = config.binDirectory ? path.join(config.binDirectory, 'redis-cli') : 'redis-cli';
  const found = await run(cli, ['--version'], { timeout: 10_000 }).catch(() => undefined);
  if (!found) {
    const where = config.binDirectory ? `in ${config.binDirectory}` : 'on PATH';
    throw new AdapterError(ORIGIN, 'CONFIG', `redis-cli was not found ${where}; install redis-tools (or valkey-tools) or set binDirectory`);
  }
  return cli;
}

/**
 * Streams a whole-server RDB snapshot: `redis-cli --rdb -` asks the server for a replication sync (REPLCONF
 * rdb-only) and writes the RDB to stdout. The password travels in REDISCLI_AUTH, never argv.
 */
export async function* rdbDump(config: RedisSourceConfig, cli: string, signal: AbortSignal): AsyncGenerator<Buffer> {
  const args = ['-h', config.host, '-p', String(config.port), '--no-auth-warning'];
  if (config.username) args.push('--user', config.username);
  if (config.tls) args.push('--tls', '--sni', config.host, ...(config.tlsRejectUnauthorized ? [] : ['--insecure']));
  args.push('--rdb', '-');
  const env: NodeJS.ProcessEnv = config.password ? { REDISCLI_AUTH: config.password } : {};
  const tool = startTool(cli, args, env, signal);
  try {
    for await (const chunk of tool.stdout) yield chunk as Buffer;
    const code = await tool.exited;
    if (code !== 0) {
      throw new AdapterError(ORIGIN, signal.aborted ? 'ABORTED' : 'TRANSIENT', `redis-cli --rdb failed (exit ${String(code)}): ${scrub(tool.stderrTail(), config)}`);
    }
  } catch (error) {
    if (signal.aborted || isAbortError(error)) throw new AdapterError(ORIGIN, 'ABORTED', 'the RDB dump was aborted');
    if (error instanceof AdapterError) throw error;
    throw new AdapterError(ORIGIN, 'TRANSIENT', `redis-cli --rdb failed: ${scrub(tool.stderrTail() || String(error), config)}`, { cause: error });
  } finally {
    await stopTool(tool);
  }
}
