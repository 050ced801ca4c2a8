import { defineSourceAdapter } from '@holdfast/sdk';
import { redisSourceConfig } from './config.js';
import { RedisSource } from './redis-source.js';

export { redisSourceConfig, type RedisSourceConfig } from './config.js';
export { RedisSource } from './redis-source.js';

export default defineSourceAdapter({
  id: 'redis',
  displayName: 'Redis / Valkey',
  description: 'Backs up Redis or Valkey as a logical SCAN + DUMP stream that Holdfast restores with RESTORE (TTLs kept), or as a whole-server RDB snapshot; directly or through SSH.',
  configSchema: redisSourceConfig,
  capabilities: { multipleDatabases: true, listDatabases: true, restore: true, fileArchive: false, scratchRestore: 'index' },
  implementation: RedisSource,
});
