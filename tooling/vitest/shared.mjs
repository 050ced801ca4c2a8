// Shared vitest settings for every Holdfast package: node environment, reflect-metadata loaded first,
// generous timeouts because tests talk to real servers.
import { fileURLToPath } from 'node:url';

export const setupFile = fileURLToPath(new URL('./setup.mjs', import.meta.url));

/** Builds a package's vitest project config. */
export function packageTestConfig(name, overrides = {}) {
  return {
    test: {
      name,
      environment: 'node',
      include: ['test/**/*.test.ts'],
      setupFiles: [setupFile],
      testTimeout: 60_000,
      hookTimeout: 120_000,
      ...overrides,
    },
  };
}
