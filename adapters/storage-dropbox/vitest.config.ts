import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// No server can run here for Dropbox: the tests start a local fake of the Dropbox API v2 in-process (test/fake/).
export default defineConfig(packageTestConfig('@holdfast/storage-dropbox'));
