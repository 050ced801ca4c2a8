import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// The suite starts its own Ceph RADOS Gateway (127.0.0.1:7480) through the shared launcher, reusing one that runs.
const rgw = fileURLToPath(new URL('../../tooling/test-services/ceph-rgw.mjs', import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/storage-s3', { globalSetup: [rgw] }));
