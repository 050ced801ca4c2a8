import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { AdapterError, type SshTarget } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../config.js';
import { ORIGIN } from './connection.js';
import { startTool } from './tool-process.js';

const run = promisify(execFile);

/** The dump tool and client found on this host, and which family they belong to (their TLS flags differ). */
export interface ClientTools {
  dump: string;
  client: string;
  isMariadb: boolean;
}

/** Runs `<tool> --version` over SSH; answers its output, or undefined when the tool is missing or fails. */
async function remoteVersion(config: MysqlSourceConfig, ssh: SshTarget, tool: string): Promise<string | undefined> {
  // An SSH login failure rejects here (AUTH/TRANSIENT): that is not "tool missing".
  const process = await startTool(config, ssh, tool, ['--version'], AbortSignal.timeout(30_000));
  let out = '';
  process.stdout.setEncoding('utf8');
  process.stdout.on('data', (text: string) => (out += text));
  process.stdin.end();
  const code = await process.exited.catch(() => 127);
  return code === 0 ? out : undefined;
}

/**
 * Finds `mariadb-dump` (preferred) or `mysqldump` and the matching client, on the Holdfast host or, in SSH mode, on
 * the SSH host; rejects with CONFIG when neither runs.
 */
export async function resolveTools(config: MysqlSourceConfig, ssh?: SshTarget): Promise<ClientTools> {
  const join = ssh ? path.posix.join : path.join;
  const at = (name: string) => (config.binDirectory ? join(config.binDirectory, name) : name);
  for (const [dump, client] of [
    ['mariadb-dump', 'mariadb'],
    ['mysqldump', 'mysql'],
  ] as const) {
    const found = ssh
      ? await remoteVersion(config, ssh, at(dump))
      : (await run(at(dump), ['--version'], { timeout: 10_000 }).catch(() => undefined))?.stdout;
    if (found !== undefined) return { dump: at(dump), client: at(client), isMariadb: /mariadb/i.test(found) };
  }
  const where = `${config.binDirectory ? `in ${config.binDirectory}` : 'on PATH'}${ssh ? ` of ${ssh.host}` : ''}`;
  throw new AdapterError(ORIGIN, 'CONFIG', `neither mariadb-dump nor mysqldump was found ${where}; install mariadb-client or set binDirectory`);
}

/** Escapes a value for a double-quoted option-file entry. */
function optionValue(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`;
}

/**
 * A private option file holding the password: it travels through a 0600 file in a 0700 directory, never argv or the
 * environment, and the file is removed when the tool is done. In SSH mode there is none (`args` is empty): the
 * password reaches the remote tool as `MYSQL_PWD` through the SDK's 0600 remote file instead.
 */
export interface OptionsFile {
  args: string[];
  remove(): Promise<void>;
}

/** Writes the `[client]` option file. `args` must come first on the tool's command line. */
export async function writeOptionsFile(config: MysqlSourceConfig, ssh?: SshTarget): Promise<OptionsFile> {
  if (ssh) return { args: [], remove: () => Promise.resolve() };
  const dir = await mkdtemp(path.join(tmpdir(), 'holdfast-mysql-'));
  await chmod(dir, 0o700);
  const file = path.join(dir, 'client.cnf');
  await writeFile(file, `[client]\npassword=${optionValue(config.password ?? '')}\n`, { mode: 0o600 });
  return { args: [`--defaults-extra-file=${file}`], remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Host, port, user and TLS flags shared by the dump tool and the client (after the option-file argument). */
export function connectionArgs(config: MysqlSourceConfig, tools: ClientTools): string[] {
  const args = ['--host', config.host, '--port', String(config.port), '--user', config.user, '--protocol=TCP'];
  if (tools.isMariadb) {
    if (config.tls === 'disable') args.push('--skip-ssl');
    if (config.tls === 'require') args.push('--ssl');
    if (config.tls === 'verify-full') args.push('--ssl', '--ssl-verify-server-cert');
  } else {
    const mode = { disable: 'DISABLED', prefer: 'PREFERRED', require: 'REQUIRED', 'verify-full': 'VERIFY_IDENTITY' }[config.tls];
    args.push(`--ssl-mode=${mode}`);
  }
  return args;
}
