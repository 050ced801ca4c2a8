import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// No server can run here for OneDrive: the tests start a local fake of Microsoft Graph's drive API in-process (test/fake/).
export default defineConfig(packageTestConfig('@holdfast/storage-onedrive'));
