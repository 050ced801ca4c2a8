// Wall-clock times in a named time zone (the user's, from the browser) and the ISO instants the API takes. Pure:
// no React, no clock of its own, so the DST edges are unit-tested (test/pitr-time.test.ts).

/** A date (`YYYY-MM-DD`) and a time (`HH:MM:SS`) as the user reads them on a wall clock in some zone. */
export interface WallTime {
  date: string;
  time: string;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{2}):(\d{2})(?::(\d{2}))?$/;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** One cached formatter per zone: the numeric wall-clock parts of an instant there (24 h, no locale surprises). */
function partsFormatter(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The wall-clock fields of `epochMs` in `timeZone`. */
function wallFields(epochMs: number, timeZone: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  const fields = Object.fromEntries(partsFormatter(timeZone).formatToParts(new Date(epochMs)).map((part) => [part.type, part.value]));
  return { year: Number(fields.year), month: Number(fields.month), day: Number(fields.day), hour: Number(fields.hour), minute: Number(fields.minute), second: Number(fields.second) };
}

/** Minutes the zone is ahead of UTC at that instant (CET: 60, CEST: 120, New York in winter: -300). */
export function offsetMinutesAt(epochMs: number, timeZone: string): number {
  const wall = wallFields(epochMs, timeZone);
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  return Math.round((asUtc - Math.floor(epochMs / 1000) * 1000) / 60_000);
}

const pad = (value: number, width = 2) => String(Math.abs(value)).padStart(width, '0');

/** `+01:00`, `-05:00`, `+05:30`, `+00:00`. */
export function formatOffset(minutes: number): string {
  return `${minutes < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
}

/** The instant as `2026-12-06T14:03:27+01:00`: the wall clock in `timeZone` with that zone's offset (seconds, no ms). */
export function isoWithOffset(epochMs: number, timeZone: string): string {
  const wall = wallFields(epochMs, timeZone);
  return `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}T${pad(wall.hour)}:${pad(wall.minute)}:${pad(wall.second)}${formatOffset(offsetMinutesAt(epochMs, timeZone))}`;
}

/** The wall clock of an instant in `timeZone`, as the date and time inputs take it. */
export function wallTimeOf(epochMs: number, timeZone: string): WallTime {
  const wall = wallFields(epochMs, timeZone);
  return { date: `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}`, time: `${pad(wall.hour)}:${pad(wall.minute)}:${pad(wall.second)}` };
}

/** What a wall time means in a zone: one instant, two (the repeated hour when clocks go back), or none (skipped). */
export type ZonedResolution =
  | { kind: 'exact'; epochMs: number }
  | { kind: 'ambiguous'; epochMs: number; later: number }
  | { kind: 'skipped' }
  | { kind: 'invalid'; message: string };

/**
 * The instant(s) a wall time in `timeZone` stands for. Clocks going forward skip an hour (02:30 on the last Sunday
 * of March does not exist in Berlin); going back repeats one (02:30 on the last Sunday of October happens twice):
 * `ambiguous` gives the earlier instant first, which is what a restore "as it was at 02:30" most likely means.
 */
export function resolveWallTime(wall: WallTime, timeZone: string): ZonedResolution {
  const date = DATE.exec(wall.date.trim());
  const time = TIME.exec(wall.time.trim());
  if (!date) return { kind: 'invalid', message: 'Enter a date as YYYY-MM-DD' };
  if (!time) return { kind: 'invalid', message: 'Enter a time as HH:MM:SS' };
  const [year, month, day] = [Number(date[1]), Number(date[2]), Number(date[3])];
  const [hour, minute, second] = [Number(time[1]), Number(time[2]), Number(time[3] ?? '0')];
  const asUtc = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(asUtc);
  if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) return { kind: 'invalid', message: `${wall.date} ${wall.time} is not a valid date and time` };
  // The offset a day either side covers every zone's transitions (none changes twice within two days).
  const offsets = new Set([offsetMinutesAt(asUtc - 86_400_000, timeZone), offsetMinutesAt(asUtc, timeZone), offsetMinutesAt(asUtc + 86_400_000, timeZone)]);
  const matches = [...offsets]
    .map((offset) => asUtc - offset * 60_000)
    .filter((candidate) => {
      const back = wallFields(candidate, timeZone);
      return Date.UTC(back.year, back.month - 1, back.day, back.hour, back.minute, back.second) === asUtc;
    })
    .sort((a, b) => a - b);
  const unique = [...new Set(matches)];
  if (unique.length === 0) return { kind: 'skipped' };
  if (unique.length === 1) return { kind: 'exact', epochMs: unique[0]! };
  return { kind: 'ambiguous', epochMs: unique[0]!, later: unique[unique.length - 1]! };
}

/** The zone's short name at that instant (`CET`, `CEST`, `EST`; `GMT+3` where the locale data has no abbreviation). */
export function zoneAbbreviation(epochMs: number, timeZone: string): string {
  const named = (locale: string) => new Intl.DateTimeFormat(locale, { timeZone, timeZoneName: 'short' }).formatToParts(new Date(epochMs)).find((part) => part.type === 'timeZoneName')?.value ?? timeZone;
  // en-GB knows the European abbreviations, en-US the American ones; either falls back to GMT±n.
  const british = named('en-GB');
  if (!british.startsWith('GMT') && !british.startsWith('UTC')) return british;
  const american = named('en-US');
  return american.startsWith('GMT') && british === 'GMT' ? 'GMT' : american;
}

/** `2026-12-06 14:03:27 CET`: unambiguous, to the second, with the zone named. */
export function formatInZone(epochMs: number, timeZone: string): string {
  const wall = wallTimeOf(epochMs, timeZone);
  return `${wall.date} ${wall.time} ${zoneAbbreviation(epochMs, timeZone)}`;
}

/** The browser's zone (IANA name); UTC when the browser does not say. */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}
