import { DateTime } from 'luxon';
import { AdapterError, isKnownTimeZone } from '@holdfast/sdk';
import type { GfsTier } from '../config.js';

const ORIGIN = { kind: 'retention', id: 'gfs' } as const;

/** Maps an instant to the name of its period in one tier, e.g. `2026-11-19` (daily) or `2026-W53` (weekly). */
export type PeriodOf = (instant: Date) => string;

/** Checks the zone once per `select` call, so a typo fails loudly instead of silently bucketing in UTC. */
export function assertTimeZone(timezone: string): void {
  if (typeof timezone !== 'string' || !isKnownTimeZone(timezone)) {
    throw new AdapterError(ORIGIN, 'CONFIG', `unknown time zone "${String(timezone)}" (expected an IANA name such as Europe/Berlin)`);
  }
}

/** Builds the period function of a tier for a zone (already validated). */
export function periodOf(tier: GfsTier, timezone: string): PeriodOf {
  return (instant) => {
    const local = DateTime.fromMillis(instant.getTime(), { zone: timezone, locale: 'en-US', numberingSystem: 'latn' });
    switch (tier) {
      // The offset keeps the two 02:00 hours of an autumn DST change apart: they are different hours of real time.
      case 'hourly':
        return local.toFormat("yyyy-MM-dd'T'HH:00ZZ");
      case 'daily':
        return local.toFormat('yyyy-MM-dd');
      // ISO week-year, not calendar year: 2027-01-01 belongs to 2026-W53.
      case 'weekly':
        return `${local.weekYear}-W${String(local.weekNumber).padStart(2, '0')}`;
      case 'monthly':
        return local.toFormat('yyyy-MM');
      case 'yearly':
        return local.toFormat('yyyy');
    }
  };
}
