import { z } from '@holdfast/sdk';

/** A tier count: a whole number of periods, 0 (or absent) switches the tier off. Strings are not coerced. */
const tierCount = (period: string) =>
  z
    .int({ error: `must be a whole number of ${period} periods` })
    .min(0, { error: `must not be negative` })
    .optional()
    .describe(`gfs only: number of ${period} periods to keep the newest backup of (0 or absent: tier off)`);

/** Policy modes: keep everything, the newest N, or grandfather-father-son tiers. */
export const RETENTION_MODES = ['keep-all', 'keep-last', 'gfs'] as const;

const TIER_FIELDS = ['hourly', 'daily', 'weekly', 'monthly', 'yearly'] as const;

/**
 * The retention policy JSON; this schema is the adapter's config schema. One flat object (not a union) so the web
 * app can draw it as one form; a refinement rejects fields that do not belong to the chosen mode.
 */
export const retentionPolicySchema = z
  .strictObject({
    mode: z
      .enum(RETENTION_MODES, { error: 'must be one of "keep-all", "keep-last", "gfs"' })
      .describe('keep-all: keep every backup; keep-last: keep the newest `count`; gfs: hourly..yearly tiers'),
    count: z
      .int({ error: 'must be a whole number of backups' })
      .min(1, { error: 'must be at least 1 (use mode "keep-all" to keep everything)' })
      .optional()
      .describe('keep-last only: number of newest backups to keep (absent: keep everything)'),
    hourly: tierCount('hourly'),
    daily: tierCount('daily'),
    weekly: tierCount('weekly (ISO week)'),
    monthly: tierCount('monthly'),
    yearly: tierCount('yearly'),
  })
  .superRefine((policy, ctx) => {
    if (policy.mode !== 'keep-last' && policy.count !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['count'], message: `applies only to mode "keep-last", not "${policy.mode}"` });
    }
    for (const tier of TIER_FIELDS) {
      if (policy.mode !== 'gfs' && policy[tier] !== undefined) {
        ctx.addIssue({ code: 'custom', path: [tier], message: `applies only to mode "gfs", not "${policy.mode}"` });
      }
    }
  });

/** A parsed retention policy. */
export type RetentionPolicy = z.output<typeof retentionPolicySchema>;


/** Tier names in the order they are applied. */
export const GFS_TIERS = TIER_FIELDS;

/** One of {@link GFS_TIERS}. */
export type GfsTier = (typeof GFS_TIERS)[number];

/** Policies the catalog seeds as system policies. */
export const retentionPresets = [
  { name: 'Keep all', config: { mode: 'keep-all' } },
  { name: 'Keep last 14', config: { mode: 'keep-last', count: 14 } },
  { name: 'GFS 7/4/12/2', config: { mode: 'gfs', daily: 7, weekly: 4, monthly: 12, yearly: 2 } },
] as const satisfies readonly { name: string; config: RetentionPolicy }[];
