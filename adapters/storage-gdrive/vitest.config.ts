import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// No server can run here for Google Drive: the tests start a local fake of the Drive API v3 in-process (test/fake/).
export default defineConfig(packageTestConfig('@holdfast/storage-gdrive'));
