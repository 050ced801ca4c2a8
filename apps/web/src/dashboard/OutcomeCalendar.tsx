import { Group, Text } from '@mantine/core';
import { useEffect, useRef } from 'react';
import { dayTooltip, OUTCOMES, type CalendarDay } from './outcomes';

const CELL = 12;
const GAP = 3;
const STEP = CELL + GAP;
const TOP = 16;

function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/**
 * A year of days, one square per day coloured by its worst outcome (success, partial, failed, no runs), each with
 * a tooltip, and a legend. Opens scrolled to today (the right end) on narrow screens: issue 47, the old heat map
 * coloured by run count (a failed day looked green) and opened on last winter.
 */
export function OutcomeCalendar({ days, from, to }: { days: readonly CalendarDay[]; from: Date; to: Date }) {
  const scroller = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = scroller.current;
    if (element) element.scrollLeft = element.scrollWidth;
  }, [days.length]);
  const byDate = new Map(days.map((day) => [day.date, day]));
  // Columns are weeks starting on Sunday, like most wall calendars; the first column may be partial.
  const start = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate() - from.getUTCDay()));
  const cells: Array<{ date: string; column: number; row: number; isBeforeRange: boolean }> = [];
  const first = isoDay(from);
  for (let time = start.getTime(), index = 0; time <= to.getTime(); time += 86_400_000, index++) {
    const date = isoDay(new Date(time));
    cells.push({ date, column: Math.floor(index / 7), row: index % 7, isBeforeRange: date < first });
  }
  const columns = (cells.at(-1)?.column ?? 0) + 1;
  const months = cells.filter((cell) => cell.date.endsWith('-01') || cell === cells[0]);
  const today = isoDay(to);
  return (
    <div>
      <div ref={scroller} style={{ overflowX: 'auto' }} tabIndex={0} role="region" aria-label="Backup calendar, scrollable" data-testid="calendar-scroller">
        <svg width={columns * STEP} height={TOP + 7 * STEP} role="img" aria-label={`Backup outcomes per day, ${isoDay(from)} to ${today}`} data-testid="outcome-calendar">
          {months.map((cell) => (
            <text key={`m-${cell.date}`} x={cell.column * STEP} y={10} fontSize={10} fill="var(--mantine-color-text)">
              {new Date(`${cell.date}T00:00:00Z`).toLocaleString(undefined, { month: 'short', timeZone: 'UTC' })}
            </text>
          ))}
          {cells
            .filter((cell) => !cell.isBeforeRange)
            .map((cell) => {
              const day = byDate.get(cell.date);
              const outcome = day?.outcome ?? 'none';
              return (
                <rect
                  key={cell.date}
                  x={cell.column * STEP}
                  y={TOP + cell.row * STEP}
                  width={CELL}
                  height={CELL}
                  rx={2}
                  fill={OUTCOMES[outcome].color}
                  stroke={cell.date === today ? 'var(--mantine-color-text)' : undefined}
                  data-date={cell.date}
                  data-outcome={outcome}
                >
                  <title>{dayTooltip(day, cell.date)}</title>
                </rect>
              );
            })}
        </svg>
      </div>
      <Group gap="md" mt="xs" data-testid="calendar-legend">
        {(Object.keys(OUTCOMES) as Array<keyof typeof OUTCOMES>).map((key) => (
          <Group key={key} gap={4}>
            <span aria-hidden="true" style={{ display: 'inline-block', width: CELL, height: CELL, borderRadius: 2, background: OUTCOMES[key].color }} />
            <Text size="xs">{OUTCOMES[key].label}</Text>
          </Group>
        ))}
        <Text size="xs" c="dimmed">
          Outlined: today. A day takes its worst outcome.
        </Text>
      </Group>
    </div>
  );
}
