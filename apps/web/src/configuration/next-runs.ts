// Only the CronTime class: the package's index also loads its job runner, which needs Node's child_process.
import { CronTime } from 'cron/dist/time';

/**
 * The next `count` times a 5-part cron expression fires in `timeZone`, computed with the `cron` package the
 * scheduler uses (same parser, same DST handling). Throws the package's message for an invalid expression.
 */
export function nextRuns(expression: string, timeZone: string, count = 5, from = new Date()): Date[] {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) throw new Error('Use a 5-part cron expression: minute hour day-of-month month day-of-week');
  const time = new CronTime(parts.join(' '), timeZone || 'UTC');
  const runs: Date[] = [];
  let cursor = from;
  for (let index = 0; index < count; index++) {
    const next = time.getNextDateFrom(cursor, timeZone || 'UTC').toJSDate();
    runs.push(next);
    cursor = next;
  }
  return runs;
}

/** A time shown in the system timezone (the one schedules run in), with the zone named. */
export function formatInZone(date: Date, timeZone: string): string {
  return new Intl.DateTimeFormat(undefined, { timeZone: timeZone || 'UTC', weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }).format(date);
}
