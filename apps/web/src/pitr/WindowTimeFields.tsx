import { Group, TextInput } from '@mantine/core';
import type { WallTime } from './zoned-time';

/**
 * The date and the time (to the second) of a point-in-time target, bounded by the recoverable window's first and last
 * wall times in `timeZone`. Both restore dialogs (PostgreSQL and MySQL/MariaDB) use it; `timeHint` says what the
 * second means for the engine.
 */
export function WindowTimeFields(props: { first: WallTime; last: WallTime; wall: WallTime; onChange: (wall: WallTime) => void; timeZone: string; timeHint: string; error?: string }) {
  const { first, last, wall, onChange } = props;
  return (
    <Group grow align="flex-start">
      <TextInput
        type="date"
        label="Date"
        description={props.timeZone}
        min={first.date}
        max={last.date}
        value={wall.date}
        onChange={(event) => onChange({ ...wall, date: event.currentTarget.value })}
        data-field="pitr-date"
        required
      />
      <TextInput
        type="time"
        label="Time (to the second)"
        description={props.timeHint}
        step={1}
        min={wall.date === first.date ? first.time : undefined}
        max={wall.date === last.date ? last.time : undefined}
        value={wall.time}
        error={props.error}
        onChange={(event) => onChange({ ...wall, time: event.currentTarget.value })}
        data-field="pitr-time"
        required
      />
    </Group>
  );
}
