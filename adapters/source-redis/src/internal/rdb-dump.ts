import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { AdapterError, isAbortError, type SshTarget } from '@holdfast/sdk';
import type { RedisSourceConfig } from '../config.js';
import { ORIGIN, scrub } from './connection.js';
import { startRemoteTool, startTool } from './tool-process.js';

const run = promisify(execFile);

/** `redis-cli --version` over SSH: true when it runs (an SSH login failure rejects). */
async function remoteCliRuns(ssh: SshTarget, cli: string): Promise<boolean> {
  const tool = await startRemoteTool(ssh, cli, ['--version'], {}, AbortSignal.timeout(30_000));
  tool.stdout.resume();
  tool.stdin.end();
  return (await tool.exited.catch(() => 127)) === 0;
}

/**
 * Path of redis-cli (on the SSH host in SSH mode); rejects with CONFIG when it does not run (checked before the dump
 * starts).
 */
export async function resolveRedisCli(config: RedisSourceConfig, ssh?: SshTarget): Promise<string> {
  const cli = config.binDirectory ? (ssh ? path.posix : path).join(config.binDirectory, 'redis-cli') : 'redis-cli';
  const found = ssh ? await remoteCliRuns(ssh, cli) : await run(cli, ['--version'], { timeout: 10_000 }).catch(() => undefined);
  if (!found) {
    const where = `${config.binDirectory ? `in ${config.binDirectory}` : 'on PATH'}${ssh ? ` of ${ssh.host}` : ''}`;
    throw new AdapterError(ORIGIN, 'CONFIG', `redis-cli was not found ${where}; install redis-tools (or valkey-tools) or set binDirectory`);
  }
  return cli;
}

/**
 * Streams a whole-server RDB snapshot: `redis-cli --rdb -` asks the server for a replication sync (REPLCONF
 * rdb-only) and writes the RDB to stdout. The password travels in REDISCLI_AUTH, never argv. In SSH mode redis-cli
 * runs on the SSH host and its stdout streams back over the channel.
 */
export async function* rdbDump(config: RedisSourceConfig, cli: string, signal: AbortSignal, ssh?: SshTarget): AsyncGenerator<Buffer> {
  const args = ['-h', config.host, '-p', String(config.port), '--no-auth-warning'];
  if (config.username) args.push('--user', config.username);
  if (config.tls) args.push('--tls', '--sni', config.host, ...(config.tlsRejectUnauthorized ? [] : ['--insecure']));
  args.push('--rdb', '-');
  const env: Record<string, string> = config.password ? { REDISCLI_AUTH: config.password } : {};
  // Over SSH the same command runs on the SSH host; REDISCLI_AUTH travels in the SDK's 0600 remote file.
  const tool = ssh ? await startRemoteTool(ssh, cli, args, env, signal) : startTool(cli, args, env, signal);
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
    await tool.stop();
  }
}
