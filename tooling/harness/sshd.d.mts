/** Where the test sshd launcher (tooling/test-services/sshd.mjs) writes its state. */
export const SSHD_STATE_FILE: string;

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

/** Reads the sshd launcher's state file; throws "the test sshd is not running" when there is none. */
export function sshdState(stateFile?: string): SshdState;

/** Command lines of `user`'s processes that mention `tool` (the tool, or the wrapper about to exec it). */
export function remoteToolProcesses(user: string, tool: string): string[];
