// The Debian `age` binary, used to prove Holdfast's age files are plain age files. Installed by the test services
// (tooling/test-services/age.mjs); a missing binary is a failure with its cause, never a skip.
import { spawnSync } from 'node:child_process';

/** Throws a message saying how to get `age` when it is not on PATH. */
export function requireAgeBinary(): void {
  const probe = spawnSync('age', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error('the `age` binary is missing: run `npm run test:services` (as root) or `apt-get install -y age`');
  }
}

/** Runs `age` with the arguments and stdin; returns status, stdout bytes and stderr text. */
export function runAge(args: string[], input?: Buffer): { status: number | null; stdout: Buffer; stderr: string } {
  const result = spawnSync('age', args, { input, maxBuffer: 64 * 1024 * 1024 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr.toString('utf8') };
}
