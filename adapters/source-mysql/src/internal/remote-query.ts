import { AdapterError, type SshTarget } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../config.js';
import { ORIGIN, scrub } from './connection.js';
import { startTool } from './tool-process.js';
import { connectionArgs, type ClientTools } from './tools.js';

/** Undoes the escaping of the client's batch output (`\t`, `\n`, `\0`, `\\`). */
function unescapeField(field: string): string {
  return field.replace(/\\([tn0\\])/g, (_match, code: string) => ({ t: '\t', n: '\n', '0': '\0', '\\': '\\' })[code]!);
}

/**
 * Runs SQL with the `mariadb`/`mysql` client on the SSH host (SSH mode has no direct route to the server) and
 * answers the rows, fields split. The SQL travels on stdin, the password in `MYSQL_PWD` through the SDK's secret file.
 */
export async function remoteQuery(config: MysqlSourceConfig, ssh: SshTarget, tools: ClientTools, sql: string): Promise<string[][]> {
  const args = [...connectionArgs(config, tools), `--connect-timeout=${config.connectTimeoutSeconds}`, '--batch', '--skip-column-names'];
  const tool = await startTool(config, ssh, tools.client, args, AbortSignal.timeout((config.connectTimeoutSeconds + 60) * 1000));
  let out = '';
  tool.stdout.setEncoding('utf8');
  tool.stdout.on('data', (chunk: string) => (out += chunk));
  tool.stdin.end(`${sql};\n`);
  try {
    const code = await tool.exited;
    if (code === 0) return out.split('\n').filter((line) => line !== '').map((line) => line.split('\t').map(unescapeField));
    const detail = scrub(tool.stderrTail(), config);
    // ERROR 1045/1044/1698: access denied; 2002/2003/2005/2013: cannot reach the server.
    const errno = Number(/ERROR (\d+)/.exec(detail)?.[1]);
    if ([1044, 1045, 1698].includes(errno)) {
      throw new AdapterError(ORIGIN, 'AUTH', `cannot connect to ${config.host}:${config.port} as ${config.user} (from ${ssh.host}): ${detail}`);
    }
    if (Number.isNaN(errno) || [2002, 2003, 2005, 2013].includes(errno)) {
      throw new AdapterError(ORIGIN, 'TRANSIENT', `cannot connect to ${config.host}:${config.port} as ${config.user} (from ${ssh.host}): ${detail}`);
    }
    throw new AdapterError(ORIGIN, 'TRANSIENT', `query on ${config.host}:${config.port} (from ${ssh.host}) failed: ${detail}`);
  } finally {
    await tool.stop();
  }
}
