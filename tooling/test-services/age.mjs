// Debian's `age` (and `age-keygen`): the tests of public-key encryption profiles (issue 45) prove that a backup
// Holdfast wrote is a plain age file by decrypting it with this binary. Installed idempotently under the apt flock.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const AGE_PATH = '/usr/bin/age';

/** Installs the `age` apt package when missing; returns a state line for ensure.mjs. */
export function ensureAge() {
  if (existsSync(AGE_PATH)) return 'already installed';
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('flock', ['/tmp/holdfast-apt.lock', 'apt-get', 'install', '-y', '--no-install-recommends', 'age'], { env, encoding: 'utf8' });
  let result = install();
  if (result.status !== 0) {
    // Stale package lists make the install fail; refresh them once.
    spawnSync('flock', ['/tmp/holdfast-apt.lock', 'apt-get', 'update'], { env, stdio: 'ignore' });
    result = install();
  }
  if (result.status !== 0 || !existsSync(AGE_PATH)) {
    throw new Error(`cannot install age (apt): ${result.stderr?.slice(-500) ?? 'apt-get failed'}`);
  }
  return 'installed';
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(`age: ${ensureAge()}\n`);
