import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RcloneStorageConfig } from '../config.js';

/** Config keys whose values are secrets in an rclone.conf section. */
const SECRET_KEY = /pass|password|secret|token|key|sas_url|credentials/i;

/** What every rclone run of one adapter instance shares: its private config file, environment and flags. */
export interface RcloneSession {
  /** Arguments placed before each command's own. */
  baseArgs: string[];
  env: NodeJS.ProcessEnv;
  /** Values to scrub from messages. */
  secrets: string[];
}

function secretsOf(config: RcloneStorageConfig, extraEnv: Record<string, string>): string[] {
  const values = Object.values(extraEnv);
  for (const line of (config.configFile ?? '').split('\n')) {
    const match = /^\s*([^=#;\s]+)\s*=\s*(.+?)\s*$/.exec(line);
    if (match?.[1] && match[2] && SECRET_KEY.test(match[1])) values.push(match[2]);
  }
  return values.filter((value) => value.length >= 4);
}

function environmentOf(config: RcloneStorageConfig): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of (config.environment ?? '').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const at = line.indexOf('=');
    env[line.slice(0, at)] = line.slice(at + 1);
  }
  return env;
}

/**
 * Writes the config file into a fresh 0700 folder as a 0600 file (rclone may also write refreshed OAuth tokens there)
 * and builds the environment: only PATH, HOME, locale and the configured RCLONE_* variables reach rclone, so the
 * Holdfast process's own secrets never do. Without a configFile the file is empty: named remotes must be defined in
 * this destination, never picked up from whatever the server user configured.
 */
export async function openSession(config: RcloneStorageConfig): Promise<{ session: RcloneSession; folder: string }> {
  const folder = await mkdtemp(join(tmpdir(), 'holdfast-rclone-'));
  const file = join(folder, 'rclone.conf');
  await writeFile(file, config.configFile ?? '', { mode: 0o600 });
  const extraEnv = environmentOf(config);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? folder,
    LANG: 'C.UTF-8',
    RCLONE_CONFIG: file,
    ...extraEnv,
  };
  const baseArgs = [
    // One attempt per command: Holdfast retries whole jobs; rclone's low-level retries still cover network hiccups.
    '--retries',
    '1',
    '--ask-password=false',
    '--contimeout',
    `${config.connectTimeoutSeconds}s`,
    ...config.flags,
  ];
  return { session: { baseArgs, env, secrets: secretsOf(config, extraEnv) }, folder };
}

/** Removes the private config folder. */
export async function closeSession(folder: string): Promise<void> {
  await rm(folder, { recursive: true, force: true });
}
