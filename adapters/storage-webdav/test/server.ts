import { randomBytes } from 'node:crypto';
import { chown, mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** What tooling/test-services/webdav.mjs wrote about the running Apache. */
export interface WebdavState {
  host: string;
  port: number;
  basicUrl: string;
  digestUrl: string;
  user: string;
  password: string;
  dataDir: string;
}

const STATE_FILE = '/tmp/holdfast-test-services/webdav/webdav.json';

/** Reads the Apache state file the global setup wrote. */
export async function webdavServer(): Promise<WebdavState> {
  try {
    return JSON.parse(await readFile(STATE_FILE, 'utf8')) as WebdavState;
  } catch (error) {
    throw new Error(`no test WebDAV server state at ${STATE_FILE} (run node tooling/test-services/webdav.mjs): ${(error as Error).message}`);
  }
}

/** A fresh folder in the served data dir, owned by Apache's user; returns its name (the config root) and local path. */
export async function freshRoot(state: WebdavState): Promise<{ root: string; local: string }> {
  const name = `holdfast-webdav-${randomBytes(6).toString('hex')}`;
  const local = join(state.dataDir, name);
  await mkdir(local);
  const owner = await stat(state.dataDir);
  await chown(local, owner.uid, owner.gid);
  return { root: `/${name}`, local };
}

/** Removes a test root (the test runs as root, so it can). */
export function removeRoot(state: WebdavState, root: string): Promise<void> {
  return rm(join(state.dataDir, root), { recursive: true, force: true });
}

/** A working basic-auth config for `root`. */
export function basicConfig(state: WebdavState, root: string): Record<string, unknown> {
  return { url: state.basicUrl, username: state.user, password: state.password, root };
}

/** A working digest-auth config for `root`. */
export function digestConfig(state: WebdavState, root: string): Record<string, unknown> {
  return { url: state.digestUrl, username: state.user, password: state.password, authType: 'digest', root };
}
