import { stat } from 'node:fs/promises';
import path from 'node:path';
import { AdapterError } from '@holdfast/sdk';
import type { SqliteSourceConfig } from '../config.js';
import { ORIGIN } from './origin.js';
import { startTool, stopTool } from './tool-process.js';

export { ORIGIN } from './origin.js';

/** Path of the sqlite3 CLI, honouring `binDirectory`. */
export function cliPath(config: SqliteSourceConfig): string {
  return config.binDirectory ? path.join(config.binDirectory, 'sqlite3') : 'sqlite3';
}

/** Result of one CLI run. */
export interface CliResult {
  stdout: string;
  stderr: string;
  code: number | null;
}

/**
 * Runs the sqlite3 CLI with dot-commands/SQL as separate arguments (`-bail`: the first error stops it). The abort
 * signal kills it. A missing CLI rejects with CONFIG.
 */
export async function runCli(config: SqliteSourceConfig, args: string[], signal: AbortSignal): Promise<CliResult> {
  const tool = startTool(cliPath(config), ['-batch', '-bail', ...args], signal);
  const out: Buffer[] = [];
  tool.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  tool.stdin.end();
  try {
    const code = await tool.exited;
    if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'sqlite3 was aborted');
    return { stdout: Buffer.concat(out).toString('utf8'), stderr: tool.stderrTail(), code };
  } catch (error) {
    if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'sqlite3 was aborted');
    throw error;
  } finally {
    await stopTool(tool);
  }
}

/** The CLI's SQLite library version (the engine that reads and writes the files). */
export async function cliVersion(config: SqliteSourceConfig, signal: AbortSignal): Promise<string> {
  const result = await runCli(config, ['-version'], signal);
  const version = /^\d+\.\d+\.\d+/.exec(result.stdout.trim())?.[0];
  if (result.code !== 0 || !version) throw new AdapterError(ORIGIN, 'CONFIG', `${cliPath(config)} -version failed: ${result.stderr || result.stdout}`);
  return version;
}

/** Rejects unless `file` is an existing regular file (the CLI would silently create an empty database). */
export async function assertDatabaseFile(file: string): Promise<void> {
  const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new AdapterError(ORIGIN, 'NOT_FOUND', `database file ${file} does not exist`);
    throw new AdapterError(ORIGIN, 'CONFIG', `cannot read database file ${file}: ${error.code ?? error.message}`);
  });
  if (!info.isFile()) throw new AdapterError(ORIGIN, 'CONFIG', `${file} is not a regular file`);
}

/** Maps a failed CLI run on `file` to a coded error. */
export function cliError(result: CliResult, what: string, file: string): AdapterError {
  const detail = (result.stderr || result.stdout).trim();
  const code = /not a database|malformed|encrypted/i.test(detail) ? 'CONFIG' : /locked|busy/i.test(detail) ? 'TRANSIENT' : 'CONFIG';
  return new AdapterError(ORIGIN, code, `${what} of ${file} failed (exit ${String(result.code)}): ${detail}`);
}

/** `PRAGMA integrity_check` of a file; resolves when it answers exactly `ok`. */
export async function assertIntact(config: SqliteSourceConfig, file: string, signal: AbortSignal): Promise<void> {
  const result = await runCli(config, [file, 'PRAGMA integrity_check;'], signal);
  if (result.code !== 0) throw cliError(result, 'PRAGMA integrity_check', file);
  const answer = result.stdout.trim();
  if (answer !== 'ok') {
    throw new AdapterError(ORIGIN, 'CONFIG', `the restored file ${file} failed PRAGMA integrity_check: ${answer.split('\n').slice(0, 5).join('; ')}`);
  }
}
