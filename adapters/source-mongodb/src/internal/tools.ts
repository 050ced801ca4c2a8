import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { constants } from 'node:fs';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { aborted, mongoError } from './errors.js';

/** Where a tool lives: `binDirectory/<name>`, else the first match on PATH; undefined when missing. */
export async function findTool(name: string, binDirectory?: string): Promise<string | undefined> {
  const dirs = binDirectory ? [binDirectory] : (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const dir of dirs) {
    const path = join(dir, name);
    if (await access(path, constants.X_OK).then(() => true, () => false)) return path;
  }
  return undefined;
}

/** The tools' `--config` YAML: the connection string, password included, as one double-quoted scalar. */
export function toolConfigYaml(uri: string): string {
  return `uri: "${uri.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"\n`;
}

/**
 * Writes the connection string (with the password) to a 0600 YAML file in a fresh 0700 temp dir, for the tools'
 * `--config` option: the password never appears in argv or the environment. Returns the path and its remover.
 */
export async function writeToolConfig(uri: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'holdfast-mongo-'));
  const path = join(dir, 'tool.yaml');
  await writeFile(path, toolConfigYaml(uri), { mode: 0o600 });
  return { path, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** A running tool with its stderr tail and exit. */
export interface ToolProcess {
  stdout: Readable;
  stdin: Writable;
  stderrTail: () => string;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** Starts a tool with a minimal environment; the signal kills it. */
export function startTool(command: string, args: string[], signal: AbortSignal): ToolProcess {
  const env = { PATH: process.env.PATH, LANG: 'C.UTF-8', HOME: process.env.HOME };
  const child = spawn(command, args, { env, signal, stdio: ['pipe', 'pipe', 'pipe'], killSignal: 'SIGKILL' });
  let tail = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => (tail = (tail + text).slice(-8192)));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') reject(mongoError('CONFIG', `${command} was not found; install the MongoDB Database Tools or set binDirectory`));
      else if (error.name === 'AbortError') reject(aborted(command));
      else reject(error);
    });
    child.once('close', (code) => resolve(code));
  });
  exited.catch(() => undefined);
  child.stdin.on('error', () => undefined);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'close').catch(() => undefined);
    }
  };
  return { stdout: child.stdout, stdin: child.stdin, stderrTail: () => tail.trim(), exited, stop };
}

/** mongodump arguments: never a credential, only the config file. */
export function mongodumpArgs(configPath: string, databases: string[], includeUsers: boolean): string[] {
  const args = ['--config', configPath, '--archive'];
  if (databases.length === 1) {
    args.push('--db', databases[0]!);
    if (includeUsers) args.push('--dumpDbUsersAndRoles');
  } else {
    for (const name of databases) args.push('--nsInclude', `${name}.*`);
  }
  return args;
}

/** mongorestore arguments, with a rename per mapped database. */
export function mongorestoreArgs(configPath: string, mapping: Record<string, string>, drop: boolean, includeUsers: boolean): string[] {
  const args = ['--config', configPath, '--archive'];
  if (drop) args.push('--drop');
  if (includeUsers) args.push('--restoreDbUsersAndRoles');
  for (const [from, to] of Object.entries(mapping)) if (from !== to) args.push('--nsFrom', `${from}.*`, '--nsTo', `${to}.*`);
  return args;
}
