import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// The suite starts its own vsftpd (127.0.0.1:2121 explicit FTPS, :2990 implicit TLS) through the shared launcher, reusing one that runs.
const vsftpd = fileURLToPath(new URL('../../tooling/test-services/vsftpd.mjs', import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/storage-ftp', { globalSetup: [vsftpd] }));
