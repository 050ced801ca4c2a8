// Debian's Chromium at /usr/bin/chromium for the web app's end-to-end test (playwright-core drives it; Playwright's
// own browser download cannot work here). Installed idempotently under the shared apt flock.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Installs the `chromium` apt package when missing; returns a state line for ensure.mjs. */
export function ensureChromium() {
  if (existsSync(CHROMIUM_PATH)) return 'already installed';
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('flock', ['/tmp/holdfast-apt.lock', 'apt-get', 'install', '-y', 'chromium'], { env, encoding: 'utf8' });
  let result = install();
  if (result.status !== 0) {
    // Stale package lists make the install fail; refresh them once.
    spawnSync('flock', ['/tmp/holdfast-apt.lock', 'apt-get', 'update'], { env, stdio: 'ignore' });
    result = install();
  }
  if (result.status !== 0 || !existsSync(CHROMIUM_PATH)) {
    throw new Error(`cannot install chromium (apt): ${result.stderr?.slice(-500) ?? 'apt-get failed'}`);
  }
  return 'installed';
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(`chromium: ${ensureChromium()}\n`);
