import { randomBytes } from 'node:crypto';
import { chown, mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** What tooling/test-services/samba.mjs wrote about the running smbd. */
export interface SambaState {
  host: string;
  port: number;
  share: string;
  readonlyShare: string;
  user: string;
  password: string;
  sharePath: string;
}

const STATE_FILE = '/tmp/holdfast-test-services/samba/samba.json';

/** Reads the samba state file the global setup wrote. */
export async function samba(): Promise<SambaState> {
  try {
    return JSON.parse(await readFile(STATE_FILE, 'utf8')) as SambaState;
  } catch (error) {
    throw new Error(`no test samba state at ${STATE_FILE} (run node tooling/test-services/samba.mjs): ${(error as Error).message}`);
  }
}

/** A fresh folder in the share, owned by the share's user; returns its path in the share and on disk. */
export async function freshRoot(state: SambaState): Promise<{ path: string; local: string }> {
  const name = `holdfast-smb-${randomBytes(6).toString('hex')}`;
  const local = join(state.sharePath, name);
  await mkdir(local);
  const owner = await stat(state.sharePath);
  await chown(local, owner.uid, owner.gid);
  return { path: name, local };
}

/** Removes a test root (the test runs as root, so it can). */
export function removeRoot(state: SambaState, path: string): Promise<void> {
  return rm(join(state.sharePath, path), { recursive: true, force: true });
}

/** A working config for `path` in the test share. */
export function smbConfig(state: SambaState, path: string): Record<string, unknown> {
  return { host: state.host, port: state.port, share: state.share, path, username: state.user, password: state.password };
}
