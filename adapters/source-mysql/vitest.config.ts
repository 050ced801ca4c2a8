import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// The machine's MariaDB 10.11 (127.0.0.1:3306); the launcher starts it when stopped and installs the client tools.
const mariadb = fileURLToPath(new URL('../../tooling/test-services/mariadb.mjs', import.meta.url));
// SSH mode tests log in to the shared OpenSSH sshd (127.0.0.1:2222), started or reused through its launcher.
const sshd = fileURLToPath(new URL('../../tooling/test-services/sshd.mjs', import.meta.url));
// Point-in-time tests (test/pitr-*): the second MariaDB on 127.0.0.1:3307 with binary logging, started or reused.
const mariadbPitr = fileURLToPath(new URL('../../tooling/test-services/mariadb-pitr.mjs', import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/source-mysql', { globalSetup: [mariadb, sshd, mariadbPitr] }));
