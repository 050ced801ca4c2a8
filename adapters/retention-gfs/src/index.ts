import { defineRetentionStrategy } from '@holdfast/sdk';
import { retentionPolicySchema } from './config.js';
import { GfsRetention } from './gfs-retention.js';

export { retentionPolicySchema, retentionPresets, GFS_TIERS } from './config.js';
export type { RetentionPolicy, GfsTier } from './config.js';
export { GfsRetention } from './gfs-retention.js';

/** Retention policies: keep all, keep the last N, or grandfather-father-son tiers. */
export default defineRetentionStrategy({
  id: 'gfs',
  displayName: 'Retention policy',
  description: 'Keep all backups, the newest N, or the newest of each hour/day/ISO week/month/year (GFS).',
  configSchema: retentionPolicySchema,
  capabilities: {},
  implementation: GfsRetention,
});
