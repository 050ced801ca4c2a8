import { randomBytes } from 'node:crypto';
import { chown, mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** What tooling/test-services/sshd.mjs wrote about the running test sshd. */
export interface SshdState {
  host: string;
  port: number;
  user: string;
  password: string;
  keyPath: string;
  hostKeySha256: string;
  home: string;
}

const STATE_FILE = '/tmp/holdfast-test-services/sshd/sshd.json';

/** Reads the sshd state file the global setup wrote. */
export async function sshd(): Promise<SshdState> {
  try {
    return JSON.parse(await readFile(STATE_FILE, 'utf8')) as SshdState;
  } catch (error) {
    throw new Error(`no test sshd state at ${STATE_FILE} (run node tooling/test-services/sshd.mjs): ${(error as Error).message}`);
  }
}

/** A fresh folder in the test user's home, owned by that user; the server sees it at the same absolute path. */
export async function freshRoot(state: SshdState): Promise<string> {
  const path = join(state.home, `holdfast-sftp-${randomBytes(6).toString('hex')}`);
  await mkdir(path);
  const { uid, gid } = await ownerOf(state.home);
  await chown(path, uid, gid);
  return path;
}

async function ownerOf(path: string): Promise<{ uid: number; gid: number }> {
  const { stat } = await import('node:fs/promises');
  const info = await stat(path);
  return { uid: info.uid, gid: info.gid };
}

/** Removes a test root (the test runs as root, so it can). */
export function removeRoot(path: string): Promise<void> {
  return rm(path, { recursive: true, force: true });
}

/** A working password config for `root`. */
export function passwordConfig(state: SshdState, root: string): Record<string, unknown> {
  return { host: state.host, port: state.port, username: state.user, password: state.password, root };
}

/** A working key config for `root`. */
export async function keyConfig(state: SshdState, root: string): Promise<Record<string, unknown>> {
  return { host: state.host, port: state.port, username: state.user, privateKey: await readFile(state.keyPath, 'utf8'), root };
}
