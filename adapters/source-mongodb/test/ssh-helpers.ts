import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The shared test sshd (tooling/test-services/sshd.mjs), whose user reaches the local servers over loopback. */
export interface SshdState {
  host: string;
  port: number;
  user: string;
  password: string;
  keyPath: string;
  hostKeySha256: string;
  home: string;
}

/** Reads the sshd launcher's state file; the globalSetup has started (or reused) the server. */
export function sshdState(): SshdState {
  try {
    return JSON.parse(readFileSync('/tmp/holdfast-test-services/sshd/sshd.json', 'utf8')) as SshdState;
  } catch (error) {
    throw new Error(`the test sshd is not running (tooling/test-services/sshd.mjs): ${(error as Error).message}`);
  }
}

/** Command lines of every process on the machine (`ps -eo args`). */
export function allCommandLines(): string[] {
  return execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' }).split('\n');
}

/** Command lines of the sshtest user's processes that mention `tool` (the tool, or the wrapper about to exec it). */
export function remoteToolProcesses(user: string, tool: string): string[] {
  return execFileSync('ps', ['-u', user, '-o', 'args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(tool));
}

/** Polls `probe` until it answers true or the time is up. */
export async function waitFor(probe: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await probe()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return probe();
}

/** This process's established TCP connections to `port` on 127.0.0.1 (from /proc: socket inodes of our fds). */
export function ownConnectionsTo(port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (match) inodes.add(match[1]!);
    } catch {
      // the fd closed while we looked
    }
  }
  const remote = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[2] === remote && fields[3] === '01' && inodes.has(fields[9]!)).length;
}
