import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// rclone itself (apt, installed by rclone.mjs) and the Apache WebDAV server of webdav.mjs (127.0.0.1:8081), both
// reused when already there; the `:local:` suite needs only a temp folder.
const launcher = (name: string) => fileURLToPath(new URL(`../../tooling/test-services/${name}`, import.meta.url));

export default defineConfig(packageTestConfig('@holdfast/storage-rclone', { globalSetup: [launcher('rclone.mjs'), launcher('webdav.mjs')] }));
