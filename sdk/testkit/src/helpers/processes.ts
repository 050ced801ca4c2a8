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
