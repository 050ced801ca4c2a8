import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// No Docker Engine runs here: the tests start their own labelled fake of the Engine API (test/fake-docker.ts).
export default defineConfig(packageTestConfig('@holdfast/source-volume'));
