import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Where the Holdfast repository's test sshd (tooling/test-services/sshd.mjs, 127.0.0.1:2222) writes its state. */
export const SSHD_STATE_FILE = '/tmp/holdfast-test-services/sshd/sshd.json';

/** The test sshd's login and pinned host key; its user reaches the local test servers over loopback. */
export interface SshdState {
  host: string;
  port: number;
  user: string;
  password: string;
  /** Path of the user's private key (ed25519, no passphrase). */
  keyPath: string;
  hostKeySha256: string;
  home: string;
}

/** Reads the sshd launcher's state file; a vitest globalSetup running the launcher has started (or reused) it. */
export function sshdState(stateFile = SSHD_STATE_FILE): SshdState {
  try {
    return JSON.parse(readFileSync(stateFile, 'utf8')) as SshdState;
  } catch (error) {
    throw new Error(`the test sshd is not running (tooling/test-services/sshd.mjs): ${(error as Error).message}`);
  }
}

/** Command lines of `user`'s processes that mention `tool` (the tool, or the wrapper about to exec it). */
export function remoteToolProcesses(user: string, tool: string): string[] {
  return execFileSync('ps', ['-u', user, '-o', 'args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(tool));
}
