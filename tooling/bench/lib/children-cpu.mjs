// The CPU seconds of the children a process has waited for, the way `/usr/bin/time` counts a pipeline: getrusage's
// RUSAGE_CHILDREN, which Node does not expose, read from /proc/self/stat (cutime, cstime). A child counts once it
// has ended and been waited for, with every descendant it waited for itself (a `sh -c 'a | b'` brings a and b).
import { readFileSync } from 'node:fs';

// Clock ticks per second of /proc's times (USER_HZ): 100 on every Linux Holdfast runs on (`getconf CLK_TCK`).
const CLOCK_TICKS = 100;

/** { user, system } seconds of this process's waited-for children so far. */
export function childrenCpuSeconds() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // The fields after the command name (in parentheses, may hold spaces); cutime and cstime are fields 16 and 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[13]) / CLOCK_TICKS, system: Number(fields[14]) / CLOCK_TICKS };
}
