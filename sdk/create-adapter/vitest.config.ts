import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

export default defineConfig(
  packageTestConfig('@holdfast/create-adapter', { globalSetup: ['./test/global-setup.ts'] }),
);
