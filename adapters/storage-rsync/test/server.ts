import { randomBytes } from 'node:crypto';
import { chown, mkdir, readFile, rm, stat } from 'node:fs/promises';
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

/** What tooling/test-services/rsyncd.mjs wrote about the running rsync daemon. */
export interface RsyncdState {
  host: string;
  port: number;
  module: string;
  user: string;
  password: string;
  dataDir: string;
}

async function readState<T>(file: string, launcher: string): Promise<T> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch (error) {
    throw new Error(`no test server state at ${file} (run node tooling/test-services/${launcher}): ${(error as Error).message}`);
  }
}

/** Folders the test helpers created, so a test can remove all of them whatever configs it derived. */
const created: string[] = [];

/** Remembers a folder for {@link removeCreated}. */
export function track(folder: string): string {
  created.push(folder);
  return folder;
}

/** Removes every folder the helpers created so far. */
export async function removeCreated(): Promise<void> {
  await Promise.all(created.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
}

export const sshd = () => readState<SshdState>('/tmp/holdfast-test-services/sshd/sshd.json', 'sshd.mjs');
export const rsyncd = () => readState<RsyncdState>('/tmp/holdfast-test-services/rsyncd/rsyncd.json', 'rsyncd.mjs');

/** A fresh folder in the SSH user's home, owned by that user, and its password config. */
export async function sshConfig(state: SshdState): Promise<Record<string, unknown>> {
  const root = join(state.home, `holdfast-rsync-${randomBytes(6).toString('hex')}`);
  await mkdir(root);
  track(root);
  const { uid, gid } = await stat(state.home);
  await chown(root, uid, gid);
  return { mode: 'ssh', host: state.host, port: state.port, username: state.user, password: state.password, root };
}

/** A fresh folder in the daemon module and its config. */
export async function daemonConfig(state: RsyncdState): Promise<Record<string, unknown>> {
  const name = `rsync-${randomBytes(6).toString('hex')}`;
  await mkdir(track(join(state.dataDir, name)));
  return { mode: 'daemon', host: state.host, port: state.port, module: state.module, username: state.user, password: state.password, root: name };
}

/** The local folder behind a config (both servers run on this machine). */
export async function folderOf(config: Record<string, unknown>): Promise<string> {
  return config.mode === 'daemon' ? join((await rsyncd()).dataDir, String(config.root)) : String(config.root);
}

/** Removes a test folder (the tests run as root). */
export async function removeFolder(config: Record<string, unknown>): Promise<void> {
  await rm(await folderOf(config), { recursive: true, force: true });
}
