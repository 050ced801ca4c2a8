import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// The suite starts Azurite (127.0.0.1:10000, from this package's devDependencies) through the shared launcher,
// reusing one that runs.
const azurite = fileURLToPath(new URL('../../tooling/test-services/azurite.mjs', import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/storage-azure-blob', { globalSetup: [azurite] }));
