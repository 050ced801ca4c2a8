import { randomBytes } from 'node:crypto';
import { chown, mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** What tooling/test-services/vsftpd.mjs wrote about the running vsftpd instances. */
export interface VsftpdState {
  host: string;
  port: number;
  implicitPort: number;
  user: string;
  password: string;
  home: string;
  caPath: string;
}

const STATE_FILE = '/tmp/holdfast-test-services/vsftpd/vsftpd.json';

/** Reads the vsftpd state file the global setup wrote. */
export async function vsftpd(): Promise<VsftpdState> {
  try {
    return JSON.parse(await readFile(STATE_FILE, 'utf8')) as VsftpdState;
  } catch (error) {
    throw new Error(`no test vsftpd state at ${STATE_FILE} (run node tooling/test-services/vsftpd.mjs): ${(error as Error).message}`);
  }
}

/** A fresh folder in the FTP user's (chroot) home, owned by that user; returns its path as the server shows it and on disk. */
export async function freshRoot(state: VsftpdState): Promise<{ root: string; local: string }> {
  const name = `holdfast-ftp-${randomBytes(6).toString('hex')}`;
  const local = join(state.home, name);
  await mkdir(local);
  const owner = await stat(state.home);
  await chown(local, owner.uid, owner.gid);
  return { root: `/${name}`, local };
}

/** Removes a test root (the test runs as root, so it can). */
export function removeRoot(state: VsftpdState, root: string): Promise<void> {
  return rm(join(state.home, root), { recursive: true, force: true });
}

/** A working explicit-FTPS config for `root` that trusts the test certificate. */
export async function explicitConfig(state: VsftpdState, root: string): Promise<Record<string, unknown>> {
  return { host: state.host, port: state.port, username: state.user, password: state.password, secure: 'explicit', ca: await readFile(state.caPath, 'utf8'), root };
}

/** A working implicit-TLS config for `root`. */
export async function implicitConfig(state: VsftpdState, root: string): Promise<Record<string, unknown>> {
  return { ...(await explicitConfig(state, root)), port: state.implicitPort, secure: 'implicit' };
}

/** A working plain-FTP config for `root`. */
export function plainConfig(state: VsftpdState, root: string): Record<string, unknown> {
  return { host: state.host, port: state.port, username: state.user, password: state.password, secure: 'none', root };
}
