import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What tooling/test-services/webdav.mjs wrote about the running Apache WebDAV server. */
export interface WebdavState {
  basicUrl: string;
  user: string;
  password: string;
  dataDir: string;
  owner: string;
}

const WEBDAV_STATE = '/tmp/holdfast-test-services/webdav/webdav.json';

/** Reads the WebDAV state file the global setup wrote. */
export async function webdav(): Promise<WebdavState> {
  try {
    return JSON.parse(await readFile(WEBDAV_STATE, 'utf8')) as WebdavState;
  } catch (error) {
    throw new Error(`no WebDAV server state at ${WEBDAV_STATE} (run node tooling/test-services/webdav.mjs): ${(error as Error).message}`);
  }
}

/** A fresh local folder and its `:local:` config. */
export async function localConfig(): Promise<Record<string, unknown>> {
  const folder = await mkdtemp(join(tmpdir(), 'holdfast-rclone-test-'));
  return { remote: `:local:${folder}` };
}

/** The folder of a `:local:` config. */
export function localFolderOf(config: Record<string, unknown>): string {
  return String(config.remote).slice(':local:'.length);
}

/** rclone's reversible obscuring, as its config files store passwords (`rclone obscure -` reads stdin). */
export function obscure(password: string): string {
  return execFileSync('rclone', ['obscure', '-'], { input: password, encoding: 'utf8' }).trim();
}

/** An rclone.conf section for the test WebDAV server. */
export function webdavConfigFile(state: WebdavState, password = state.password, url = state.basicUrl): string {
  return ['[dav]', 'type = webdav', `url = ${url}`, 'vendor = other', `user = ${state.user}`, `pass = ${obscure(password)}`, ''].join('\n');
}

/** A fresh folder on the WebDAV server (created on disk, owned by the server user) and its config. */
export async function webdavConfig(state: WebdavState): Promise<Record<string, unknown>> {
  const name = `rclone-${randomBytes(6).toString('hex')}`;
  const folder = join(state.dataDir, name);
  await mkdir(folder);
  execFileSync('chown', [state.owner, folder]);
  return { remote: `dav:${name}`, configFile: webdavConfigFile(state) };
}

/** Removes what a config's folder holds (both kinds). */
export async function removeFolder(config: Record<string, unknown>): Promise<void> {
  const remote = String(config.remote);
  if (remote.startsWith(':local:')) await rm(localFolderOf(config), { recursive: true, force: true });
  else await rm(join((await webdav()).dataDir, remote.slice('dav:'.length)), { recursive: true, force: true });
}
