import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// No SQL Server can run here: the tests start their own labelled TDS fake (test/fake-tds/). The .bak it writes is
// fetched over SFTP from the shared OpenSSH sshd (127.0.0.1:2222), started or reused through its launcher.
const sshd = fileURLToPath(new URL('../../tooling/test-services/sshd.mjs', import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/source-mssql', { globalSetup: [sshd] }));
