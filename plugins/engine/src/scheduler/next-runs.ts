import { CronTime } from 'cron';
import { isValidSchedule } from './cron-schedule.js';

/** One upcoming run: the instant (UTC) and the same instant in the zone the scheduler uses, as the editor shows it. */
export interface UpcomingRun {
  at: string;
  local: string;
}

/**
 * The next `count` instants a 5-part cron fires in `zone`, or null when it is not a valid schedule. The scheduler
 * reads schedules in the system timezone, so the preview must too: a browser's own zone would show other times.
 */
export function nextRunsOf(expression: string, zone: string, count: number): UpcomingRun[] | null {
  if (!isValidSchedule(expression)) return null;
  const times = new CronTime(expression.trim().split(/\s+/).join(' '), zone).sendAt(count);
  // cron answers one DateTime for a count of 1 and an array otherwise.
  return (Array.isArray(times) ? times : [times]).map((time) => ({
    at: time.toUTC().toISO() ?? '',
    local: time.toISO({ suppressMilliseconds: true, includeOffset: true }) ?? '',
  }));
}
