import { Fieldset, Group, NumberInput, Select, Stack, Text, TextInput } from '@mantine/core';
import type { paths } from '@holdfast/client';

/** A job's scheduled test restore as the API takes it (null: none). */
export type TestRestore = NonNullable<NonNullable<paths['/api/jobs']['post']['requestBody']>['content']['application/json']['testRestore']>;
type TargetType = TestRestore['target']['type'];

const TARGETS: Array<{ value: TargetType; label: string }> = [
  { value: 'database', label: 'A throwaway database (PostgreSQL, MySQL/MariaDB, MySQL/MariaDB point-in-time jobs)' },
  { value: 'directory', label: 'A throwaway folder (directory sources, PostgreSQL point-in-time jobs)' },
  { value: 'sqlite', label: 'A throwaway SQLite file (SQLite sources)' },
  { value: 'redis', label: 'A reserved Redis database index' },
];

/** The target a type starts with: the job's own source, or a folder or index still to fill in. */
function targetOf(type: TargetType): TestRestore['target'] {
  if (type === 'directory' || type === 'sqlite') return { type, path: '' };
  if (type === 'redis') return { type, database: 15, sourceId: null };
  return { type, sourceId: null };
}

/**
 * The job editor's test restore section (issue 47, item 6): where a scheduled test restore puts its throwaway copy,
 * its own schedule and the tolerance of its row-count check. The server checks the combination (docs/verification.md).
 */
export function TestRestoreFields({ value, sources, onChange }: { value: TestRestore | null; sources: Array<{ id: string; name: string }>; onChange: (next: TestRestore | null) => void }) {
  const target = value?.target;
  const sourceChoices = sources.map((source) => ({ value: source.id, label: source.name }));
  return (
    <Fieldset legend="Test restores" data-testid="test-restore-fields">
      <Stack gap="sm">
        <Text size="sm" c="dimmed">
          A test restore proves a backup can be restored: the newest backup goes into a throwaway copy, is checked against the figures taken at backup time, and is removed.
        </Text>
        <Select
          label="Restore into"
          data={TARGETS}
          value={target?.type ?? null}
          placeholder="No test restores"
          clearable
          onChange={(type) => onChange(type ? { schedule: value?.schedule ?? null, ...(value?.rowCountTolerancePercent !== undefined ? { rowCountTolerancePercent: value.rowCountTolerancePercent } : {}), target: targetOf(type as TargetType) } : null)}
          data-field="job-test-restore-target"
        />
        {value && target && (target.type === 'database' || target.type === 'redis') && (
          <Select
            label="On the server of"
            description="Empty: the job's own source"
            data={sourceChoices}
            value={target.sourceId ?? null}
            clearable
            onChange={(sourceId) => onChange({ ...value, target: { ...target, sourceId } })}
            data-field="job-test-restore-source"
          />
        )}
        {value && target && (target.type === 'directory' || target.type === 'sqlite') && (
          <TextInput
            label="Below the folder"
            description="An absolute path; a throwaway folder is made inside it and removed afterwards"
            required
            value={target.path}
            onChange={(event) => onChange({ ...value, target: { ...target, path: event.currentTarget.value } })}
            data-field="job-test-restore-path"
          />
        )}
        {value && target?.type === 'redis' && (
          <NumberInput
            label="Reserved database index"
            description="0 to 1023; it must be empty, and it is flushed after each test restore"
            min={0}
            max={1023}
            value={target.database}
            onChange={(database) => onChange({ ...value, target: { ...target, database: typeof database === 'number' ? database : 0 } })}
            data-field="job-test-restore-index"
          />
        )}
        {value && (
          <Group grow align="flex-start">
            <TextInput
              label="Test restore schedule (cron)"
              description="Empty: only when started by hand"
              value={value.schedule ?? ''}
              onChange={(event) => onChange({ ...value, schedule: event.currentTarget.value.trim() === '' ? null : event.currentTarget.value })}
              data-field="job-test-restore-schedule"
            />
            <NumberInput
              label="Row count tolerance (%)"
              description="Allowed difference from the backup-time counts; empty: 0"
              min={0}
              max={100}
              value={value.rowCountTolerancePercent ?? ''}
              onChange={(percent) => {
                const { rowCountTolerancePercent: _dropped, ...rest } = value;
                onChange(typeof percent === 'number' ? { ...rest, rowCountTolerancePercent: percent } : rest);
              }}
              data-field="job-test-restore-tolerance"
            />
          </Group>
        )}
      </Stack>
    </Fieldset>
  );
}
