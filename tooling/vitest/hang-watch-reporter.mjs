// Watches for test files that never finish. Vitest's test and hook timeouts cannot fire in a worker whose event loop
// is blocked (a synchronous child process waiting on a pipe, say), and then the whole run waits until CI kills it,
// with nothing in the log naming the file. This reporter names every file that has run for more than WARN minutes,
// with the test it is in, and when one reaches LIMIT minutes it stops the run with a non-zero exit instead.
import { execFileSync } from 'node:child_process';

const WARN_MINUTES = Number(process.env.HOLDFAST_TEST_FILE_WARN_MINUTES ?? 8);
const LIMIT_MINUTES = Number(process.env.HOLDFAST_TEST_FILE_LIMIT_MINUTES ?? 20);
const CHECK_EVERY_MS = Number(process.env.HOLDFAST_TEST_WATCH_INTERVAL_SECONDS ?? 60) * 1000;

/** SIGKILLs every process below `root` (workers, their child processes, and theirs). */
function killDescendants(root) {
  let table;
  try {
    table = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8', timeout: 5_000 });
  } catch {
    return;
  }
  const children = new Map();
  for (const line of table.split('\n')) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (!pid) continue;
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(pid);
  }
  const doomed = [];
  const pending = [root];
  while (pending.length > 0) {
    for (const child of children.get(pending.pop()) ?? []) {
      doomed.push(child);
      pending.push(child);
    }
  }
  for (const pid of doomed) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

export default class HangWatchReporter {
  constructor() {
    /** moduleId -> { project, startedAt, test } */
    this.running = new Map();
    this.timer = undefined;
  }

  onInit() {
    this.timer = setInterval(() => this.check(), CHECK_EVERY_MS);
    this.timer.unref();
  }

  onTestModuleStart(testModule) {
    this.running.set(testModule.moduleId, { project: testModule.project.name || 'root', startedAt: Date.now(), test: '(none reported yet)' });
  }

  onTestCaseReady(testCase) {
    const entry = this.running.get(testCase.module.moduleId);
    if (entry) entry.test = testCase.fullName;
  }

  onTestModuleEnd(testModule) {
    this.running.delete(testModule.moduleId);
  }

  onTestRunEnd() {
    clearInterval(this.timer);
  }

  check() {
    const now = Date.now();
    for (const [moduleId, entry] of this.running) {
      const minutes = (now - entry.startedAt) / 60_000;
      if (minutes < WARN_MINUTES) continue;
      // A blocked worker cannot send its latest events, so this is the last test it reported before blocking.
      const line = `${entry.project} ${moduleId} has run for ${minutes.toFixed(1)} min; last test reported: ${entry.test}`;
      if (minutes < LIMIT_MINUTES) {
        process.stdout.write(`\nslow test file: ${line}\n`);
        continue;
      }
      process.stdout.write(`\nhung test file: ${line}. Stopping the run (limit ${LIMIT_MINUTES} min per file).\n`);
      process.stdout.write('\ntests: 0 passed, 1 failed, 0 skipped\n');
      // The workers and whatever they started would keep running (and keep CI's log pipe open) after this process.
      killDescendants(process.pid);
      process.exit(1);
    }
  }
}
