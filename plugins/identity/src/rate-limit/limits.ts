import type { RateLimitClass } from '@holdfast/kernel';
import type { IdentitySettings } from '../settings/identity-settings.js';

/** Points and window (seconds) of one class. */
export interface ClassLimit {
  points: number;
  durationSeconds: number;
}

/** The classes SPEC "Limits" names, each with its own settings. */
type SettingsClass = Exclude<RateLimitClass, 'browser'>;

/**
 * A signed-in browser session's reads are counted per user at this multiple of the GET limit (default 500 per
 * minute): a dashboard load is about six reads, and 30 reloads plus a walk through every page must stay under it.
 * It follows `apiPoints`/`apiDuration`, so raising or lowering the GET limit moves it too.
 */
export const BROWSER_READ_FACTOR = 5;

/** SPEC "Limits" defaults: auth 5/min, GET 100/min, mutations 20/min, per IP. */
export const DEFAULT_LIMITS: Readonly<Record<SettingsClass, ClassLimit>> = {
  auth: { points: 5, durationSeconds: 60 },
  api: { points: 100, durationSeconds: 60 },
  mutation: { points: 20, durationSeconds: 60 },
};

/** Setting keys of each class (SPEC "SystemSetting"). */
export const LIMIT_SETTING_KEYS: Readonly<Record<SettingsClass, { points: string; duration: string }>> = {
  auth: { points: 'authPoints', duration: 'authDuration' },
  api: { points: 'apiPoints', duration: 'apiDuration' },
  mutation: { points: 'mutationPoints', duration: 'mutationDuration' },
};

/** The current limit of a class: the settings when set to positive integers, the defaults otherwise. */
export async function currentLimit(settings: IdentitySettings, kind: RateLimitClass): Promise<ClassLimit> {
  if (kind === 'browser') {
    const reads = await currentLimit(settings, 'api');
    return { points: reads.points * BROWSER_READ_FACTOR, durationSeconds: reads.durationSeconds };
  }
  const keys = LIMIT_SETTING_KEYS[kind];
  const fallback = DEFAULT_LIMITS[kind];
  return {
    points: await settings.getPositiveInt(keys.points, fallback.points),
    durationSeconds: await settings.getPositiveInt(keys.duration, fallback.durationSeconds),
  };
}
