// The repository's own test sshd (tooling/test-services/sshd.mjs, 127.0.0.1:2222), as the SSH-mode tests of the
// source adapters reach it. Repository infrastructure: it lived in the published testkit until issue 40 item 5.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Where the test sshd launcher writes its state. */
export const SSHD_STATE_FILE = '/tmp/holdfast-test-services/sshd/sshd.json';

/** Reads the sshd launcher's state file; a vitest globalSetup running the launcher has started (or reused) it. */
export function sshdState(stateFile = SSHD_STATE_FILE) {
  try {
    return JSON.parse(readFileSync(stateFile, 'utf8'));
  } catch (error) {
    throw new Error(`the test sshd is not running (tooling/test-services/sshd.mjs): ${error.message}`);
  }
}

/** Command lines of `user`'s processes that mention `tool` (the tool, or the wrapper about to exec it). */
export function remoteToolProcesses(user, tool) {
  return execFileSync('ps', ['-u', user, '-o', 'args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(tool));
}
