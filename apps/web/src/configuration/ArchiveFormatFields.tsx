import { Fieldset, Group, NumberInput, Radio, Stack, Text } from '@mantine/core';
import { FULL_EVERY_DAYS, FULL_EVERY_RUNS, fitArchiveOptions, type ArchiveCapabilities, type ArchiveOptions } from './archive-options';

interface ArchiveFormatFieldsProps {
  value: ArchiveOptions;
  capabilities: ArchiveCapabilities;
  errors: Partial<Record<keyof ArchiveOptions, string>>;
  onChange(next: ArchiveOptions): void;
}

/**
 * The job editor's "Backup format" choice, shown only for sources that can write a seekable archive, and the
 * incremental chain limits for the file sources among them.
 */
export function ArchiveFormatFields({ value, capabilities, errors, onChange }: ArchiveFormatFieldsProps) {
  if (!capabilities.isSeekable) return null;
  const isChainShown = value.archiveFormat === 'SEEKABLE' && capabilities.hasFileArchive;
  return (
    <Stack gap="sm">
      <Radio.Group
        label="Backup format"
        value={value.archiveFormat}
        error={errors.archiveFormat}
        // Plain keeps no chain: the limits would be refused, so switching back clears them.
        onChange={(format) => onChange(fitArchiveOptions({ ...value, archiveFormat: format as ArchiveOptions['archiveFormat'] }, capabilities))}
        data-field="job-archive-format"
      >
        <Stack gap="xs" mt={4}>
          <Radio value="PLAIN" label="Plain" description="The source's own format (a tar, a dump): a restore reads the whole backup" />
          <Radio value="SEEKABLE" label="Seekable archive" description="A Holdfast archive: single files, folders or databases restore without reading the whole backup" />
        </Stack>
      </Radio.Group>
      {isChainShown && <IncrementalChainFields value={value} errors={errors} onChange={onChange} />}
    </Stack>
  );
}

/** NumberInput hands over '' when cleared: empty means the limit is not set. */
function numberOrNull(input: number | string): number | null {
  return typeof input === 'number' ? input : null;
}

function IncrementalChainFields({ value, errors, onChange }: Omit<ArchiveFormatFieldsProps, 'capabilities'>) {
  return (
    <Fieldset legend="Incremental chain" data-testid="job-incremental-chain">
      <Stack gap="xs">
        <Group grow align="flex-start">
          <NumberInput
            label="Full backup every N runs"
            description={`${FULL_EVERY_RUNS.min} to ${FULL_EVERY_RUNS.max}, the full backup included; empty: not set`}
            min={FULL_EVERY_RUNS.min}
            max={FULL_EVERY_RUNS.max}
            allowDecimal={false}
            value={value.fullEveryRuns ?? ''}
            error={errors.fullEveryRuns}
            onChange={(input) => onChange({ ...value, fullEveryRuns: numberOrNull(input) })}
            data-field="job-full-every-runs"
          />
          <NumberInput
            label="Full backup every N days"
            description={`${FULL_EVERY_DAYS.min} to ${FULL_EVERY_DAYS.max}, counted from the chain's full backup; empty: not set`}
            min={FULL_EVERY_DAYS.min}
            max={FULL_EVERY_DAYS.max}
            allowDecimal={false}
            value={value.fullEveryDays ?? ''}
            error={errors.fullEveryDays}
            onChange={(input) => onChange({ ...value, fullEveryDays: numberOrNull(input) })}
            data-field="job-full-every-days"
          />
        </Group>
        <Text size="sm" c="dimmed">
          Runs between full backups store only what changed. Both empty: every run is a full backup.
        </Text>
      </Stack>
    </Fieldset>
  );
}
