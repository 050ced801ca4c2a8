import { validateCronExpression } from 'cron';

/**
 * Checks a 5-part cron expression (minute hour day-of-month month day-of-week). The `cron` package also accepts a
 * leading seconds field; Holdfast schedules are minute-granular, so exactly five fields are required.
 */
export function cronProblem(expression: string): string | null {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 || fields[0] === '') {
    return `must have 5 space-separated fields (minute hour day-of-month month day-of-week), got ${fields[0] === '' ? 0 : fields.length}`;
  }
  const result = validateCronExpression(fields.join(' '));
  return result.valid ? null : `is not a valid cron expression: ${result.error?.message ?? 'unparseable'}`;
}
