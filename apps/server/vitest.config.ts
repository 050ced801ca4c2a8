import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// The end-to-end tests back up to a real OpenSSH sshd (127.0.0.1:2222) through the shared launcher.
const sshd = fileURLToPath(new URL('../../tooling/test-services/sshd.mjs', import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/server', { globalSetup: [sshd] }));
