import { Group, Stack, Text } from '@mantine/core';
import { OUTCOMES, type CalendarDay } from './outcomes';

const HEIGHT = 160;

/**
 * Runs per day as stacked bars (success, partial, failed), drawn with plain elements: the chart library it replaces
 * was most of the dashboard's JavaScript (issue 47: the first load sent 1.2 MB).
 */
export function ActivityBars({ days }: { days: readonly CalendarDay[] }) {
  const max = Math.max(1, ...days.map((day) => day.success + day.partial + day.failed));
  const summary = days.map((day) => `${day.date}: ${day.success} success, ${day.partial} partial, ${day.failed} failed`).join('; ');
  return (
    <Stack gap={4}>
      <Group gap={4} align="flex-end" wrap="nowrap" h={HEIGHT} role="img" aria-label={`Runs per day. ${summary}`} data-testid="activity-bars">
        {days.map((day) => (
          <Stack key={day.date} gap={0} justify="flex-end" style={{ flex: 1, height: '100%' }} title={`${day.date}: ${day.success} success, ${day.partial} partial, ${day.failed} failed`}>
            {(['failed', 'partial', 'success'] as const).map((key) =>
              day[key] > 0 ? <div key={key} style={{ height: `${(day[key] / max) * 100}%`, background: OUTCOMES[key].color, minHeight: 2 }} /> : null,
            )}
          </Stack>
        ))}
      </Group>
      <Group gap={4} wrap="nowrap" aria-hidden="true">
        {days.map((day, index) => (
          <Text key={day.date} size="xs" style={{ flex: 1, textAlign: 'center' }}>
            {index % 2 === 0 ? day.date.slice(8) : ''}
          </Text>
        ))}
      </Group>
      <Group gap="md">
        {(['success', 'partial', 'failed'] as const).map((key) => (
          <Group key={key} gap={4}>
            <span aria-hidden="true" style={{ display: 'inline-block', width: 10, height: 10, background: OUTCOMES[key].color }} />
            <Text size="xs">{OUTCOMES[key].label}</Text>
          </Group>
        ))}
      </Group>
    </Stack>
  );
}
