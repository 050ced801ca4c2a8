import { Button, Checkbox, SimpleGrid, Stack, Switch, Table, Text, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useAdapters } from '../api/adapters';
import { api, unwrap } from '../api/client';
import { ErrorAlert, QueryState } from '../components/PageState';
import { ToneBadge } from '../components/StatusBadge';
import { EditorPanel } from '../configuration/EditorPanel';
import { PageHeader } from '../configuration/PageHeader';
import { DeleteButton, EditButton, RecordTable } from '../configuration/RecordTable';
import { useDeleteRecord, useSaveRecord } from '../configuration/useRecordMutations';

type Template = Awaited<ReturnType<typeof loadTemplates>>[number];
type Outcome = 'onSuccess' | 'onPartial' | 'onFailed';
type Matrix = Record<string, Record<Outcome, boolean>>;

const OUTCOMES: Array<{ key: Outcome; label: string }> = [
  { key: 'onSuccess', label: 'Success' },
  { key: 'onPartial', label: 'Partial' },
  { key: 'onFailed', label: 'Failed' },
];

const QUERY_KEY = ['notification-templates'];

function loadTemplates() {
  return unwrap(api.GET('/api/notification-templates'));
}

function TemplateForm({ template, onDone }: { template: Template | null; onDone: () => void }) {
  const channels = useAdapters('notification');
  const [name, setName] = useState(template?.name ?? '');
  const [description, setDescription] = useState(template?.description ?? '');
  const [isDefault, setIsDefault] = useState(template?.isDefault ?? false);
  const [matrix, setMatrix] = useState<Matrix>(() => Object.fromEntries((template?.bindings ?? []).map(({ channelId, ...outcomes }) => [channelId, outcomes])));
  const [nameError, setNameError] = useState('');
  const save = useSaveRecord(
    QUERY_KEY,
    () => {
      // A channel with no outcome ticked is no binding at all.
      const bindings = Object.entries(matrix)
        .filter(([, outcomes]) => OUTCOMES.some(({ key }) => outcomes[key]))
        .map(([channelId, outcomes]) => ({ channelId, ...outcomes }));
      const body = { name: name.trim(), description: description.trim() || null, isDefault, bindings };
      return template ? unwrap(api.PUT('/api/notification-templates/{id}', { params: { path: { id: template.id } }, body })) : unwrap(api.POST('/api/notification-templates', { body }));
    },
    onDone,
  );
  const toggle = (channelId: string, outcome: Outcome, on: boolean) => {
    const current = matrix[channelId] ?? { onSuccess: false, onPartial: false, onFailed: false };
    setMatrix({ ...matrix, [channelId]: { ...current, [outcome]: on } });
  };
  return (
    <EditorPanel
      title={template ? `Edit ${template.name}` : 'Add a notification template'}
      onSubmit={() => {
        if (!name.trim()) return setNameError('Enter a name');
        setNameError('');
        save.mutate();
      }}
      submitLabel="Save template"
      saving={save.isPending}
      error={save.error}
      errorTitle="Could not save the template"
      onCancel={onDone}
    >
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <TextInput label="Name" required value={name} error={nameError} onChange={(event) => setName(event.currentTarget.value)} data-field="ntemplate-name" />
        <TextInput label="Description" value={description} onChange={(event) => setDescription(event.currentTarget.value)} />
      </SimpleGrid>
      <div>
        <Text size="sm" fw={500} id="binding-matrix-label">
          Which outcomes each channel receives
        </Text>
        <QueryState isPending={channels.isPending} error={channels.error} isEmpty={channels.data?.length === 0} empty="No notification channels yet: add one under Channels first.">
          <Table.ScrollContainer minWidth={420}>
            <Table aria-labelledby="binding-matrix-label" data-testid="binding-matrix">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Channel</Table.Th>
                  {OUTCOMES.map((outcome) => (
                    <Table.Th key={outcome.key}>{outcome.label}</Table.Th>
                  ))}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {channels.data?.map((channel) => (
                  <Table.Tr key={channel.id}>
                    <Table.Td>{channel.name}</Table.Td>
                    {OUTCOMES.map((outcome) => (
                      <Table.Td key={outcome.key}>
                        <Checkbox
                          aria-label={`${channel.name}: ${outcome.label}`}
                          checked={matrix[channel.id]?.[outcome.key] ?? false}
                          onChange={(event) => toggle(channel.id, outcome.key, event.currentTarget.checked)}
                        />
                      </Table.Td>
                    ))}
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </QueryState>
      </div>
      <Switch label="Default template (used by jobs that name none)" checked={isDefault} onChange={(event) => setIsDefault(event.currentTarget.checked)} />
    </EditorPanel>
  );
}

/** Notification templates: which channels a job notifies, per outcome (Success, Partial, Failed). */
export default function NotificationTemplatesPage() {
  const templates = useQuery({ queryKey: QUERY_KEY, queryFn: loadTemplates });
  const channels = useAdapters('notification');
  const [editing, setEditing] = useState<Template | 'new' | null>(null);
  const remove = useDeleteRecord(QUERY_KEY, (id) => unwrap(api.DELETE('/api/notification-templates/{id}', { params: { path: { id } } })));
  const channelName = (id: string) => channels.data?.find((channel) => channel.id === id)?.name ?? id;
  const describe = (binding: Template['bindings'][number]) =>
    `${channelName(binding.channelId)} (${OUTCOMES.filter(({ key }) => binding[key]).map(({ label }) => label).join(', ')})`;
  return (
    <Stack>
      <PageHeader title="Notification templates">
        <Button onClick={() => setEditing('new')}>Add template</Button>
      </PageHeader>
      {editing && <TemplateForm key={editing === 'new' ? 'new' : editing.id} template={editing === 'new' ? null : editing} onDone={() => setEditing(null)} />}
      {remove.error && <ErrorAlert error={remove.error} title="Could not delete the template" />}
      <QueryState isPending={templates.isPending} error={templates.error} isEmpty={templates.data?.length === 0} empty="No notification templates yet.">
        <RecordTable
          records={templates.data}
          headers={['Name', 'Channels', 'Flags']}
          minWidth={640}
          rowTestId="ntemplate-row"
          cells={(template) => (
            <>
              <Table.Td>{template.name}</Table.Td>
              <Table.Td>{template.bindings.map(describe).join('; ') || '—'}</Table.Td>
              <Table.Td>{template.isDefault && <ToneBadge color="blue">default</ToneBadge>}</Table.Td>
            </>
          )}
          actions={(template) => (
            <>
              <EditButton name={template.name} onClick={() => setEditing(template)} />
              <DeleteButton name={template.name} onDelete={() => remove.mutate(template.id)} />
            </>
          )}
        />
      </QueryState>
    </Stack>
  );
}
