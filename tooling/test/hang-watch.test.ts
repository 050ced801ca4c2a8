// A test file that blocks its worker (a synchronous child process) cannot be stopped by vitest's own timeouts; the run
// used to wait until CI killed it, with no file named in the log. The hang-watch reporter names it and ends the run.
import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const config = fileURLToPath(new URL('./fixtures/hanging/vitest.config.mjs', import.meta.url));

describe('hang-watch reporter', () => {
  it('names a blocked test file and its test, then stops the run with a failure and no worker left', async () => {
    const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--config', config], {
      cwd: root,
      env: { ...process.env, HOLDFAST_TEST_FILE_WARN_MINUTES: '0.02', HOLDFAST_TEST_FILE_LIMIT_MINUTES: '0.4', HOLDFAST_TEST_WATCH_INTERVAL_SECONDS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const started = Date.now();
    // Resolves on 'close': stdout and stderr ended, so no worker kept the pipe open.
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(1);
    // The limit (24 s) leaves a loaded CI machine time to start the fixture's worker and report its test.
    expect(Date.now() - started).toBeLessThan(90_000);
    // Nothing it started is left: the worker's own child (sleep 120) was killed with it.
    expect(execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' })).not.toMatch(/^sleep 120$/m);
    expect(output).toMatch(/slow test file: .*blocks\.fixture\.ts has run for/);
    expect(output).toMatch(/hung test file: .*blocks\.fixture\.ts has run for [\d.]+ min; last test reported: blocks the event loop in a synchronous child process\. Stopping the run/);
  }, 120_000);
});
