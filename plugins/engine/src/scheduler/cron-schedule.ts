import { CronTime, validateCronExpression } from 'cron';

/**
 * True for a 5-part cron expression (minute hour day-of-month month day-of-week). The `cron` package also takes a
 * leading seconds field; job schedules are minute-granular, so exactly five fields are required.
 */
export function isValidSchedule(expression: string): boolean {
  const fields = expression.trim().split(/\s+/);
  return fields.length === 5 && fields[0] !== '' && validateCronExpression(fields.join(' ')).valid;
}

/** The next instant `expression` fires in `zone`, or null when it never does or cannot be parsed. */
export function nextRunOf(expression: string, zone: string): Date | null {
  try {
    return new CronTime(expression, zone).sendAt().toJSDate();
  } catch {
    return null;
  }
}
