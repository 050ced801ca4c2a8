import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// No server: the launcher only makes sure the sqlite3 CLI (which runs the online backup) is installed.
const sqlite = fileURLToPath(new URL('../../tooling/test-services/sqlite.mjs', import.meta.url));
// SSH mode tests log in to the shared OpenSSH sshd (127.0.0.1:2222), started or reused through its launcher.
const sshd = fileURLToPath(new URL('../../tooling/test-services/sshd.mjs', import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/source-sqlite', { globalSetup: [sqlite, sshd] }));
