import { createRequire } from 'node:module';

/** The locale every date computation of the server uses; dates are never formatted for people on the server. */
export const DATE_LOCALE = 'en-US';

interface LuxonSettings {
  Settings: { defaultLocale: string };
}

/**
 * Gives the date library of the `cron` package a fixed default locale. Without one, luxon asks the runtime for the
 * system locale (`new Intl.DateTimeFormat().resolvedOptions()`) the first time any schedule is computed, and that
 * first date formatter loads ICU's date data: about 8 MiB of resident memory (6.4 file-backed, 1.7 anonymous) that
 * the process then carries for good, even when every zone it uses is UTC (docs/benchmarks.md, "Session 13").
 * Schedules only do date arithmetic (ISO weeks, no names), so the locale changes no result. Zones other than UTC
 * still need ICU and load it when first used.
 *
 * luxon is resolved from `cron`'s own location: that is the instance `cron` loads (its CommonJS build, separate from
 * the ES build the adapters import, which pass the locale themselves).
 */
export function pinScheduleLocale(): void {
  const requireFromHere = createRequire(import.meta.url);
  const requireFromCron = createRequire(requireFromHere.resolve('cron'));
  (requireFromCron('luxon') as LuxonSettings).Settings.defaultLocale = DATE_LOCALE;
}
