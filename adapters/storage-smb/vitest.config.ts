import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// The suite starts its own Samba smbd (127.0.0.1:4445) through the shared launcher, reusing one that runs.
const samba = fileURLToPath(new URL('../../tooling/test-services/samba.mjs', import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/storage-smb', { globalSetup: [samba] }));
