import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// The machine's Redis 7 (127.0.0.1:6379); the launcher starts it when stopped and installs redis-tools.
const redis = fileURLToPath(new URL('../../tooling/test-services/redis.mjs', import.meta.url));
// SSH mode tests log in to the shared OpenSSH sshd (127.0.0.1:2222), started or reused through its launcher.
const sshd = fileURLToPath(new URL('../../tooling/test-services/sshd.mjs', import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/source-redis', { globalSetup: [redis, sshd] }));
