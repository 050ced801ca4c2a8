/** The gfs retention adapter's policy JSON (docs/retention.md): one flat object with a mode. */
export type RetentionMode = 'keep-all' | 'keep-last' | 'gfs';
export const GFS_TIERS = ['hourly', 'daily', 'weekly', 'monthly', 'yearly'] as const;

export interface RetentionForm {
  mode: RetentionMode;
  count: number;
  tiers: Record<(typeof GFS_TIERS)[number], number>;
}

export const EMPTY_RETENTION: RetentionForm = { mode: 'keep-last', count: 14, tiers: { hourly: 0, daily: 7, weekly: 4, monthly: 12, yearly: 0 } };

export function retentionFromConfig(config: Record<string, unknown>): RetentionForm {
  const number = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback);
  const mode = (['keep-all', 'keep-last', 'gfs'].includes(String(config.mode)) ? config.mode : 'keep-all') as RetentionMode;
  return {
    mode,
    count: number(config.count, EMPTY_RETENTION.count),
    tiers: Object.fromEntries(GFS_TIERS.map((tier) => [tier, number(config[tier], mode === 'gfs' ? 0 : EMPTY_RETENTION.tiers[tier])])) as RetentionForm['tiers'],
  };
}

/** Only the fields of the chosen mode: the server rejects fields of other modes. */
export function retentionConfig(form: RetentionForm): Record<string, unknown> {
  if (form.mode === 'keep-all') return { mode: 'keep-all' };
  if (form.mode === 'keep-last') return { mode: 'keep-last', count: form.count };
  return { mode: 'gfs', ...Object.fromEntries(GFS_TIERS.filter((tier) => form.tiers[tier] > 0).map((tier) => [tier, form.tiers[tier]])) };
}

export function describeRetention(config: Record<string, unknown>): string {
  const form = retentionFromConfig(config);
  if (form.mode === 'keep-all') return 'Keep every backup';
  if (form.mode === 'keep-last') return typeof config.count === 'number' ? `Keep the newest ${config.count}` : 'Keep every backup';
  const tiers = GFS_TIERS.filter((tier) => form.tiers[tier] > 0).map((tier) => `${form.tiers[tier]} ${tier}`);
  return tiers.length ? `GFS: ${tiers.join(', ')}` : 'GFS without limits (keeps every backup)';
}
