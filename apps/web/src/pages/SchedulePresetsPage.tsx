import { Button, Code, SimpleGrid, Stack, Table, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorAlert, QueryState } from '../components/PageState';
import { ToneBadge } from '../components/StatusBadge';
import { EditorPanel } from '../configuration/EditorPanel';
import { NextRunsPreview } from '../configuration/NextRunsPreview';
import { PageHeader } from '../configuration/PageHeader';
import { DeleteButton, EditButton, RecordTable } from '../configuration/RecordTable';
import { useDeleteRecord, useSaveRecord } from '../configuration/useRecordMutations';

type Preset = Awaited<ReturnType<typeof loadPresets>>[number];

const QUERY_KEY = ['schedule-presets'];

function loadPresets() {
  return unwrap(api.GET('/api/schedule-presets'));
}

function PresetForm({ preset, onDone }: { preset: Preset | null; onDone: () => void }) {
  const [form, setForm] = useState({ name: preset?.name ?? '', description: preset?.description ?? '', schedule: preset?.schedule ?? '0 2 * * *' });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const save = useSaveRecord(
    QUERY_KEY,
    () => {
      const body = { name: form.name.trim(), description: form.description.trim() || null, schedule: form.schedule.trim() };
      return preset ? unwrap(api.PUT('/api/schedule-presets/{id}', { params: { path: { id: preset.id } }, body })) : unwrap(api.POST('/api/schedule-presets', { body }));
    },
    onDone,
  );
  return (
    <EditorPanel
      title={preset ? `Edit ${preset.name}` : 'Add a schedule preset'}
      onSubmit={() => {
        const found: Record<string, string> = {};
        if (!form.name.trim()) found.name = 'Enter a name';
        if (form.schedule.trim().split(/\s+/).length !== 5) found.schedule = 'Use a 5-part cron expression, e.g. 0 3 * * *';
        setErrors(found);
        if (Object.keys(found).length === 0) save.mutate();
      }}
      submitLabel="Save preset"
      saving={save.isPending}
      error={save.error}
      errorTitle="Could not save the preset"
      onCancel={onDone}
    >
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <TextInput label="Name" required value={form.name} error={errors.name} onChange={(event) => setForm({ ...form, name: event.currentTarget.value })} data-field="preset-name" />
        <TextInput label="Description" value={form.description} onChange={(event) => setForm({ ...form, description: event.currentTarget.value })} />
      </SimpleGrid>
      <TextInput
        label="Schedule (cron)"
        required
        description="Minute hour day-of-month month day-of-week, in the system timezone"
        value={form.schedule}
        error={errors.schedule}
        onChange={(event) => setForm({ ...form, schedule: event.currentTarget.value })}
        data-field="preset-schedule"
      />
      <NextRunsPreview schedule={form.schedule} />
    </EditorPanel>
  );
}

/** Schedule presets: named cron expressions that jobs can link (a job follows its preset when the preset changes). */
export default function SchedulePresetsPage() {
  const presets = useQuery({ queryKey: QUERY_KEY, queryFn: loadPresets });
  const [editing, setEditing] = useState<Preset | 'new' | null>(null);
  const remove = useDeleteRecord(QUERY_KEY, (id) => unwrap(api.DELETE('/api/schedule-presets/{id}', { params: { path: { id } } })));
  return (
    <Stack>
      <PageHeader title="Schedule presets">
        <Button onClick={() => setEditing('new')}>Add preset</Button>
      </PageHeader>
      {editing && <PresetForm key={editing === 'new' ? 'new' : editing.id} preset={editing === 'new' ? null : editing} onDone={() => setEditing(null)} />}
      {remove.error && <ErrorAlert error={remove.error} title="Could not delete the preset" />}
      <QueryState isPending={presets.isPending} error={presets.error} isEmpty={presets.data?.length === 0} empty="No schedule presets yet.">
        <RecordTable
          records={presets.data}
          headers={['Name', 'Schedule', 'Flags']}
          minWidth={560}
          rowTestId="preset-row"
          cells={(preset) => (
            <>
              <Table.Td>{preset.name}</Table.Td>
              <Table.Td>
                <Code>{preset.schedule}</Code>
              </Table.Td>
              <Table.Td>{preset.isSystem && <ToneBadge color="gray">built-in</ToneBadge>}</Table.Td>
            </>
          )}
          actions={(preset) => (
            <>
              <EditButton name={preset.name} onClick={() => setEditing(preset)} />
              {!preset.isSystem && <DeleteButton name={preset.name} onDelete={() => remove.mutate(preset.id)} />}
            </>
          )}
        />
      </QueryState>
    </Stack>
  );
}
