import type { RateLimitClass } from '@holdfast/kernel';
import type { IdentitySettings } from '../settings/identity-settings.js';

/** Points and window (seconds) of one class. */
export interface ClassLimit {
  points: number;
  durationSeconds: number;
}

/** SPEC "Limits" defaults: auth 5/min, GET 100/min, mutations 20/min, per IP. */
export const DEFAULT_LIMITS: Readonly<Record<RateLimitClass, ClassLimit>> = {
  auth: { points: 5, durationSeconds: 60 },
  api: { points: 100, durationSeconds: 60 },
  mutation: { points: 20, durationSeconds: 60 },
};

/** Setting keys of each class (SPEC "SystemSetting"). */
export const LIMIT_SETTING_KEYS: Readonly<Record<RateLimitClass, { points: string; duration: string }>> = {
  auth: { points: 'authPoints', duration: 'authDuration' },
  api: { points: 'apiPoints', duration: 'apiDuration' },
  mutation: { points: 'mutationPoints', duration: 'mutationDuration' },
};

/** The current limit of a class: the settings when set to positive integers, the defaults otherwise. */
export async function currentLimit(settings: IdentitySettings, kind: RateLimitClass): Promise<ClassLimit> {
  const keys = LIMIT_SETTING_KEYS[kind];
  const fallback = DEFAULT_LIMITS[kind];
  return {
    points: await settings.getPositiveInt(keys.points, fallback.points),
    durationSeconds: await settings.getPositiveInt(keys.duration, fallback.durationSeconds),
  };
}
