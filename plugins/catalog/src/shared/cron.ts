import { CronTime } from 'cron';

/**
 * Checks a 5-part cron expression (minute hour day-of-month month day-of-week). The `cron` package also accepts a
 * leading seconds field; Holdfast schedules are minute-granular, so exactly five fields are required.
 */
export function cronProblem(expression: string): string | null {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 || fields[0] === '') {
    return `must have 5 space-separated fields (minute hour day-of-month month day-of-week), got ${fields[0] === '' ? 0 : fields.length}`;
  }
  try {
    // Parsed in UTC: without a zone `cron` asks Intl for the system's, and the process's first Intl.DateTimeFormat
    // loads ICU's date data (MiBs it would otherwise never need). The zone does not change what is valid.
    new CronTime(fields.join(' '), 'UTC');
    return null;
  } catch (error) {
    return `is not a valid cron expression: ${error instanceof Error ? error.message : 'unparseable'}`;
  }
}
