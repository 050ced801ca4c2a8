import { CronTime } from 'cron';

/** Answers of {@link isValidSchedule} by expression: thousands of jobs share a few dozen schedules. */
const validity = new Map<string, boolean>();
/** Bound of the memo (cleared when reached), so arbitrary expressions cannot grow it without limit. */
const MAX_MEMO = 10_000;

/**
 * True for a 5-part cron expression (minute hour day-of-month month day-of-week). The `cron` package also takes a
 * leading seconds field; job schedules are minute-granular, so exactly five fields are required. Memoised: parsing
 * an expression costs tens of microseconds, and the scheduler and the dashboard check every job's schedule.
 */
export function isValidSchedule(expression: string): boolean {
  const known = validity.get(expression);
  if (known !== undefined) return known;
  const fields = expression.trim().split(/\s+/);
  const isValid = fields.length === 5 && fields[0] !== '' && parses(fields.join(' '));
  if (validity.size >= MAX_MEMO) validity.clear();
  validity.set(expression, isValid);
  return isValid;
}

/**
 * Parsed in UTC: without a zone `cron` asks Intl for the system's zone, and the process's first Intl.DateTimeFormat
 * loads ICU's date data (MiBs a server whose zones are all UTC never needs). The zone does not change what is valid.
 */
function parses(expression: string): boolean {
  try {
    new CronTime(expression, 'UTC');
    return true;
  } catch {
    return false;
  }
}

/** The next instant `expression` fires in `zone`, or null when it never does or cannot be parsed. */
export function nextRunOf(expression: string, zone: string): Date | null {
  try {
    return new CronTime(expression, zone).sendAt().toJSDate();
  } catch {
    return null;
  }
}
