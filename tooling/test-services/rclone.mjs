// Debian's rclone for the rclone storage tests. rclone is a client, not a server: this launcher only installs it
// (idempotently, under the shared apt flock) and records its version; the tests use a `:local:` remote in a temp
// folder and the Apache WebDAV server of webdav.mjs. Usable three ways: `ensureRclone()` from ensure.mjs, as a vitest
// globalSetup (default export), or `node rclone.mjs`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const RCLONE_STATE_DIR = '/tmp/holdfast-test-services/rclone';
/** JSON file tests read: binary, version. */
export const RCLONE_STATE_FILE = join(RCLONE_STATE_DIR, 'rclone.json');

function versionOf() {
  const result = spawnSync('rclone', ['version'], { encoding: 'utf8' });
  if (result.status !== 0) return undefined;
  return /rclone v(\S+)/.exec(result.stdout)?.[1];
}

function aptInstall(packages) {
  // Several launchers may install at once; apt's own lock fails instead of waiting, so serialise on one flock.
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    spawnSync('flock', ['/tmp/holdfast-apt.lock', 'apt-get', 'install', '-y', '--no-install-recommends', ...packages], { env, encoding: 'utf8' });
  let result = install();
  if (result.status !== 0) {
    spawnSync('flock', ['/tmp/holdfast-apt.lock', 'apt-get', 'update'], { env, stdio: 'ignore' });
    result = install();
  }
  return result;
}

/** Installs rclone when missing; resolves `'already installed'` or `'installed'`. */
export async function ensureRclone() {
  let state = 'already installed';
  let version = versionOf();
  if (!version) {
    const result = aptInstall(['rclone']);
    version = versionOf();
    if (!version) throw new Error(`cannot install rclone (apt package rclone): ${result.stderr?.slice(-500) ?? 'apt-get failed'}`);
    state = 'installed';
  }
  mkdirSync(RCLONE_STATE_DIR, { recursive: true });
  writeFileSync(RCLONE_STATE_FILE, `${JSON.stringify({ binary: 'rclone', version }, null, 2)}\n`);
  return `${state} (v${version})`;
}

/** vitest globalSetup entry. */
export default async function setup() {
  await ensureRclone();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureRclone().then(
    (state) => process.stdout.write(`rclone ${state}\n`),
    (error) => {
      process.stderr.write(`rclone: ${error.message}\n`);
      process.exit(1);
    },
  );
}
