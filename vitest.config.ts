import { defineConfig } from 'vitest/config';

// One workspace config: every package with a vitest.config.ts is a project.
// Most test files wait on real servers, child processes and timeouts rather than on the CPU, so running a few files
// at once keeps `npm test` short on the 2-core CI machine (vitest's default there would be a single worker).
export default defineConfig({
  test: {
    projects: ['kernel', 'platform/*', 'sdk/*', 'plugins/*', 'adapters/*', 'apps/*', 'tooling'],
    reporters: ['default', './tooling/vitest/summary-reporter.mjs', './tooling/vitest/hang-watch-reporter.mjs'],
    maxWorkers: Number(process.env.HOLDFAST_TEST_WORKERS ?? 3),
  },
});
