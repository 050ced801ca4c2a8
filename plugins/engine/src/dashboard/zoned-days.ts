/** Calendar-day arithmetic in an IANA time zone, with `Intl` only (no date library in the engine). */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

function partsOf(instant: number, zone: string): Record<string, number> {
  // UTC from the Date itself: the process's first Intl.DateTimeFormat loads ICU's date data (MiBs it otherwise never
  // needs when every zone is UTC, the default).
  if (zone === 'UTC') {
    const date = new Date(instant);
    return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate(), hour: date.getUTCHours(), minute: date.getUTCMinutes(), second: date.getUTCSeconds() };
  }
  const parts: Record<string, number> = {};
  for (const part of formatterOf(zone).formatToParts(new Date(instant))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return parts;
}

/** `YYYY-MM-DD` of an instant in `zone`. */
export function dayOf(instant: Date | number, zone: string): string {
  const p = partsOf(typeof instant === 'number' ? instant : instant.getTime(), zone);
  return `${String(p.year).padStart(4, '0')}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
}

/** Milliseconds `zone` is ahead of UTC at `instant`. */
function offsetAt(instant: number, zone: string): number {
  const p = partsOf(instant, zone);
  const asUtc = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/** The instant a calendar day starts in `zone` (DST-aware: the offset is taken at that instant). */
export function startOfDay(day: string, zone: string): Date {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  const guess = Date.UTC(year, month - 1, date);
  let instant = guess - offsetAt(guess, zone);
  instant = guess - offsetAt(instant, zone);
  return new Date(instant);
}

/** The day `count` days after `day` (negative goes back). */
export function addDays(day: string, count: number): string {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, date + count)).toISOString().slice(0, 10);
}

/** Days from `from` to `to`, both included. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) days.push(day);
  return days;
}

/** True for a real `YYYY-MM-DD` date. */
export function isCalendarDay(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && addDays(text, 0) === text;
}
