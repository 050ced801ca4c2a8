import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// No server: the launcher only makes sure the sqlite3 CLI (which runs the online backup) is installed.
const sqlite = fileURLToPath(new URL('../../tooling/test-services/sqlite.mjs', import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/source-sqlite', { globalSetup: [sqlite] }));
