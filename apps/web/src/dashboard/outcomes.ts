/** One day of `GET /api/dashboard/calendar`. */
export interface CalendarDay {
  date: string;
  success: number;
  partial: number;
  failed: number;
  /** The worst outcome of the day (the server's rule): one failed run makes the day failed. */
  outcome: 'success' | 'partial' | 'failed' | 'none';
}

/** Colour and wording of each outcome; the same in the calendar, its legend and the 14-day bars. */
export const OUTCOMES = {
  success: { label: 'Success', color: 'var(--mantine-color-green-7)' },
  partial: { label: 'Partial', color: 'var(--mantine-color-yellow-5)' },
  failed: { label: 'Failed', color: 'var(--mantine-color-red-7)' },
  none: { label: 'No runs', color: 'var(--mantine-color-default-border)' },
} as const;

/** The tooltip of a day: its date, outcome and counts ("2026-12-04: failed (3 success, 1 failed)"). */
export function dayTooltip(day: CalendarDay | undefined, date: string): string {
  if (!day || day.outcome === 'none') return `${date}: no runs`;
  const counts = (['success', 'partial', 'failed'] as const).filter((key) => day[key] > 0).map((key) => `${day[key]} ${key}`);
  return `${date}: ${OUTCOMES[day.outcome].label.toLowerCase()} (${counts.join(', ')})`;
}

/** Runs in the last `days` days of the calendar (the success rate means nothing when there were none). */
export function runsInLast(days: readonly CalendarDay[], count: number): number {
  return days.slice(-count).reduce((sum, day) => sum + day.success + day.partial + day.failed, 0);
}
