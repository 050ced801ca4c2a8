import { defineConfig } from 'vitest/config';

// One workspace config: every package with a vitest.config.ts is a project.
export default defineConfig({
  test: {
    projects: ['kernel', 'sdk/*', 'plugins/*', 'adapters/*', 'apps/*', 'tooling'],
    reporters: ['default', './tooling/vitest/summary-reporter.mjs'],
  },
});
