// `npm test`: start the servers the tests need, build every package, then run every vitest project once.
// The summary reporter prints the closing `tests: N passed, N failed, N skipped` line CI reads.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ensureTestServices } from '../test-services/ensure.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: process.env });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

try {
  await ensureTestServices();
} catch (error) {
  // One line that names the service and what to do; the README's "Tests" section lists every prerequisite.
  process.stderr.write(`npm test: cannot start the test services: ${error.message}\n`);
  process.exit(1);
}
const buildStatus = run('npx', ['turbo', 'run', 'build', '--output-logs=errors-only']);
if (buildStatus !== 0) {
  process.stderr.write('npm test: the build failed, no tests were run\n');
  process.exit(buildStatus);
}
process.exit(run('npx', ['vitest', 'run', ...process.argv.slice(2)]));
