import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { AdapterError } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../config.js';
import { ORIGIN } from './connection.js';

const run = promisify(execFile);

/** The dump tool and client found on this host, and which family they belong to (their TLS flags differ). */
export interface ClientTools {
  dump: string;
  client: string;
  isMariadb: boolean;
}

/** Finds `mariadb-dump` (preferred) or `mysqldump` and the matching client; rejects with CONFIG when neither runs. */
export async function resolveTools(config: MysqlSourceConfig): Promise<ClientTools> {
  const at = (name: string) => (config.binDirectory ? path.join(config.binDirectory, name) : name);
  for (const [dump, client] of [
    ['mariadb-dump', 'mariadb'],
    ['mysqldump', 'mysql'],
  ] as const) {
    const found = await run(at(dump), ['--version'], { timeout: 10_000 }).catch(() => undefined);
    if (found) return { dump: at(dump), client: at(client), isMariadb: /mariadb/i.test(found.stdout) };
  }
  const where = config.binDirectory ? `in ${config.binDirectory}` : 'on PATH';
  throw new AdapterError(ORIGIN, 'CONFIG', `neither mariadb-dump nor mysqldump was found ${where}; install mariadb-client or set binDirectory`);
}

/** Escapes a value for a double-quoted option-file entry. */
function optionValue(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`;
}

/**
 * A private option file holding the password: it travels through a 0600 file in a 0700 directory, never argv or the
 * environment, and the file is removed when the tool is done.
 */
export interface OptionsFile {
  arg: string;
  remove(): Promise<void>;
}

/** Writes the `[client]` option file. Must be the tool's first argument. */
export async function writeOptionsFile(config: MysqlSourceConfig): Promise<OptionsFile> {
  const dir = await mkdtemp(path.join(tmpdir(), 'holdfast-mysql-'));
  await chmod(dir, 0o700);
  const file = path.join(dir, 'client.cnf');
  await writeFile(file, `[client]\npassword=${optionValue(config.password ?? '')}\n`, { mode: 0o600 });
  return { arg: `--defaults-extra-file=${file}`, remove: () => rm(dir, { recursive: true, force: true }) };
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
