import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// No Docker Engine runs here: the tests start their own labelled fake of the Engine API (test/fake-docker.ts).
// Docker over SSH logs in to the shared OpenSSH sshd (127.0.0.1:2222), started or reused through its launcher.
const sshd = fileURLToPath(new URL('../../tooling/test-services/sshd.mjs', import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/source-volume', { globalSetup: [sshd] }));
