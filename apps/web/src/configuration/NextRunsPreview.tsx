import { List, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { formatInZone, nextRuns } from './next-runs';

/** The system timezone setting (schedules run in it); UTC until it is loaded or when it cannot be read. */
export function useSystemTimezone(): string {
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => unwrap(api.GET('/api/settings')), retry: false });
  return settings.data?.systemTimezone || 'UTC';
}

/** The next five runs of a schedule, or why the expression has none. */
export function NextRunsPreview({ schedule }: { schedule: string }) {
  const timeZone = useSystemTimezone();
  let runs: Date[] = [];
  let problem = '';
  try {
    runs = nextRuns(schedule, timeZone);
  } catch (error) {
    problem = (error as Error).message;
  }
  return (
    <div data-testid="next-runs">
      <Text size="sm" fw={500}>
        Next runs ({timeZone})
      </Text>
      {problem ? (
        <Text size="sm" fw={600} role="status">
          {problem}
        </Text>
      ) : (
        <List size="sm">
          {runs.map((run) => (
            <List.Item key={run.toISOString()} data-testid="next-run">
              {formatInZone(run, timeZone)}
            </List.Item>
          ))}
        </List>
      )}
    </div>
  );
}
