import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// The e2e test backs up to the shared OpenSSH sshd (127.0.0.1:2222) and drives the built app in Debian's Chromium.
const sshd = fileURLToPath(new URL('../../tooling/test-services/sshd.mjs', import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/web', { globalSetup: [sshd], testTimeout: 600_000 }));
