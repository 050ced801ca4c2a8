import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

// No MongoDB server can run here: the tests start their own labelled wire-protocol fake (test/fake-mongo.ts).
export default defineConfig(packageTestConfig('@holdfast/source-mongodb'));
