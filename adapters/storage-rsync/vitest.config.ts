import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// OpenSSH sshd (127.0.0.1:2222, sshd.mjs) for SSH mode and the rsync daemon (127.0.0.1:8873, rsyncd.mjs, which also
// installs rsync), both reused when already running.
const launcher = (name: string) => fileURLToPath(new URL(`../../tooling/test-services/${name}`, import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/storage-rsync', { globalSetup: [launcher('rsyncd.mjs'), launcher('sshd.mjs')] }));
