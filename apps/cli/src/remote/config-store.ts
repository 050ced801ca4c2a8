import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** What `holdfast login` stores: where the server is and how to authenticate (an API key or a session). */
export interface StoredLogin {
  url: string;
  apiKey?: string;
  session?: { cookie: string; csrfToken: string; email: string; expiresAt?: string };
}

/**
 * `$HOLDFAST_CONFIG`, else `$XDG_CONFIG_HOME/holdfast/config.json`, else `~/.config/holdfast/config.json`.
 * The file holds a credential, so it is written 0600 in a 0700 directory.
 */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HOLDFAST_CONFIG) return env.HOLDFAST_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'holdfast', 'config.json');
}

export async function readLogin(env: NodeJS.ProcessEnv = process.env): Promise<StoredLogin | undefined> {
  const path = configPath(env);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<StoredLogin>;
    return typeof parsed.url === 'string' ? (parsed as StoredLogin) : undefined;
  } catch {
    throw new ConfigFileError(`${path} is not valid JSON; run holdfast login again or delete it`);
  }
}

export async function writeLogin(login: StoredLogin, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const path = configPath(env);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  // Our own folder is tightened even if it existed; a folder the user chose with HOLDFAST_CONFIG (say /tmp) is theirs.
  if (!env.HOLDFAST_CONFIG) await chmod(dirname(path), 0o700);
  // Written with mode 0600 from the start, then chmod in case the file already existed with wider rights.
  await writeFile(path, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
  return path;
}

export async function deleteLogin(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const path = configPath(env);
  const existed = (await readLogin(env).catch(() => undefined)) !== undefined;
  await rm(path, { force: true });
  return existed;
}

/** A broken config file: a usage/config problem (exit 10), not a crash. */
export class ConfigFileError extends Error {
  override name = 'ConfigFileError';
}
