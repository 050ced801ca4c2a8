import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// SSH mode tests log in to the shared OpenSSH sshd (127.0.0.1:2222), started or reused through its launcher.
const sshd = fileURLToPath(new URL('../../tooling/test-services/sshd.mjs', import.meta.url));
// The replication check tests use the second cluster (127.0.0.1:5433, wal_level=replica) of the PITR tests.
const postgresPitr = fileURLToPath(new URL('../../tooling/test-services/postgres-pitr.mjs', import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/source-postgres', { globalSetup: [sshd, postgresPitr] }));
