import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '@holdfast/tooling/vitest';

export default defineConfig(packageTestConfig('@holdfast/agents'));
