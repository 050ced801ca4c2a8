import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// No MongoDB server can run here: the tests start their own labelled wire-protocol fake (test/fake-mongo.ts).
// SSH mode tests log in to the shared OpenSSH sshd (127.0.0.1:2222), started or reused through its launcher.
const sshd = fileURLToPath(new URL('../../tooling/test-services/sshd.mjs', import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/source-mongodb', { globalSetup: [sshd] }));
