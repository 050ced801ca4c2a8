import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/**
 * Process ids whose parent is `parentPid` (default: this process), read from /proc. Used to prove an aborted dump
 * left no child behind. Linux only; elsewhere /proc is missing and this throws, naming the reason.
 */
export async function listChildProcesses(parentPid = process.pid): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch (error) {
    throw new Error(`cannot list child processes: /proc is not readable (${(error as Error).message})`);
  }
  const children: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => undefined);
    if (!stat) continue;
    // Field 4 is the parent pid; the command name (field 2) may contain spaces, so parse after its closing paren.
    const afterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = afterName[0];
    if (Number(afterName[1]) === parentPid && state !== 'Z') children.push(Number(entry));
  }
  return children;
}

/** Polls until no child of this process outside `known` runs; resolves the leftovers after `timeoutMs`. */
export async function waitForNoNewChildren(known: readonly number[], timeoutMs = 3_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const leftovers = (await listChildProcesses()).filter((pid) => !known.includes(pid));
    if (leftovers.length === 0 || Date.now() >= deadline) return leftovers;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Command lines of every process on the machine (`ps -eo args`), e.g. to prove no secret reached an argv. */
export function allCommandLines(): string[] {
  return execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' }).split('\n');
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
