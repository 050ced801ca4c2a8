import { List, Text } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, errorMessage, unwrap } from '../api/client';

/** The system timezone setting (schedules run in it); UTC until it is loaded or when it cannot be read. */
export function useSystemTimezone(): string {
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => unwrap(api.GET('/api/settings')), retry: false });
  return settings.data?.systemTimezone || 'UTC';
}

/** A time as the server reads it in the system timezone (the offset it gives), named with that zone. */
function formatInZone(at: string, timeZone: string): string {
  return new Intl.DateTimeFormat(undefined, { timeZone, weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }).format(new Date(at));
}

/**
 * The next five runs of a schedule, computed by the server (`GET /api/schedule-preview`): the scheduler's own cron
 * reading in the system timezone, which an editor who may not read the settings still sees right (issue 47, item 6).
 */
export function NextRunsPreview({ schedule }: { schedule: string }) {
  // Asked once typing pauses, not per keystroke: every read counts against the session's budget.
  const [settled] = useDebouncedValue(schedule.trim(), 300);
  const preview = useQuery({
    queryKey: ['schedule-preview', settled],
    queryFn: async () => (await unwrap(api.GET('/api/schedule-preview', { params: { query: { schedule: settled, count: 5 } } }))).data,
    enabled: settled !== '',
    placeholderData: keepPreviousData,
    retry: false,
    staleTime: 60_000,
  });
  const zone = preview.data?.timezone;
  const problem = settled === '' ? 'Enter a 5-part cron expression: minute hour day-of-month month day-of-week' : preview.error ? errorMessage(preview.error) : '';
  return (
    <div data-testid="next-runs">
      <Text size="sm" fw={500}>
        Next runs{zone ? ` (${zone})` : ''}
      </Text>
      {problem ? (
        <Text size="sm" fw={600} role="status">
          {problem}
        </Text>
      ) : (
        <List size="sm">
          {(preview.isPlaceholderData ? [] : (preview.data?.runs ?? [])).map((run) => (
            <List.Item key={run.at} data-testid="next-run">
              {formatInZone(run.at, zone!)}
            </List.Item>
          ))}
        </List>
      )}
    </div>
  );
}
