import { BIN, PACKAGE_ROOT, requireBuilt, runNode, TSC } from './helpers.js';

/** The tests drive the real bin, so compile it from the current sources once before any test file runs. */
export default async function setup(): Promise<void> {
  requireBuilt(['kernel', 'sdk/adapter', 'sdk/testkit']);
  const build = await runNode([TSC, '-p', `${PACKAGE_ROOT}tsconfig.build.json`]);
  if (build.code !== 0) throw new Error(`building ${BIN} failed:\n${build.stdout}${build.stderr}`);
}
