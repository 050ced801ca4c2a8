import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// The suite starts its own Apache mod_dav (127.0.0.1:8081) through the shared launcher, reusing one that runs.
const webdav = fileURLToPath(new URL('../../tooling/test-services/webdav.mjs', import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/storage-webdav', { globalSetup: [webdav] }));
