import { AdapterError, type SshTarget } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../config.js';
import { connectionArgs, connectionError, ORIGIN, scrub } from './connection.js';
import { startTool } from './tool-process.js';

/** Separates the fields of psql's unaligned output (a byte no name or version contains). */
const FIELD_SEPARATOR = '\x1f';

/** Quotes a string literal for SQL (standard_conforming_strings is on since PostgreSQL 9.1). */
export function quoteLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * Runs SQL with `psql` on the SSH host (SSH mode has no direct route to the server) and answers the rows, fields
 * split. The SQL travels on stdin, the password in the SDK's secret file; a failed login is mapped like the client's.
 */
export async function remoteQuery(config: PostgresSourceConfig, ssh: SshTarget, database: string, sql: string): Promise<string[][]> {
  const args = ['-X', '-q', '-A', '-t', '-F', FIELD_SEPARATOR, '-v', 'ON_ERROR_STOP=1', ...connectionArgs(config, database)];
  const signal = AbortSignal.timeout((config.connectTimeoutSeconds + 60) * 1000);
  const tool = await startTool(config, ssh, 'psql', args, signal);
  let out = '';
  tool.stdout.setEncoding('utf8');
  tool.stdout.on('data', (chunk: string) => (out += chunk));
  tool.stdin.end(`${sql};\n`);
  try {
    const code = await tool.exited;
    if (code === 0) return out.split('\n').filter((line) => line !== '').map((line) => line.split(FIELD_SEPARATOR));
    const detail = scrub(tool.stderrTail(), config);
    // Exit 2 is psql's "connection to the server failed".
    if (code === 2) throw connectionError(new Error(detail), config);
    throw new AdapterError(ORIGIN, 'TRANSIENT', `psql on ${ssh.host} failed (exit ${String(code)}): ${detail}`);
  } finally {
    await tool.stop();
  }
}
