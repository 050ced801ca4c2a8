import { Button, Code, Group, SimpleGrid, Stack, Switch, Table, Text, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorAlert, QueryState } from '../components/PageState';
import { ToneBadge } from '../components/StatusBadge';
import { previewName, SAMPLE_MOMENT } from '../configuration/naming-preview';
import { useSystemTimezone } from '../configuration/NextRunsPreview';
import { EditorPanel } from '../configuration/EditorPanel';
import { PageHeader } from '../configuration/PageHeader';
import { DeleteButton, EditButton, RecordTable } from '../configuration/RecordTable';
import { useDeleteRecord, useSaveRecord } from '../configuration/useRecordMutations';

type Template = Awaited<ReturnType<typeof loadTemplates>>[number];

const QUERY_KEY = ['naming-templates'];

function loadTemplates() {
  return unwrap(api.GET('/api/naming-templates'));
}

/** The name a sample run would get, updated on every keystroke. */
function LivePreview({ pattern }: { pattern: string }) {
  const timeZone = useSystemTimezone();
  const result = previewName(pattern, { jobName: 'Immich', dbName: 'photos', chain: '', at: SAMPLE_MOMENT, timeZone });
  return (
    <div aria-live="polite">
      <Text size="sm" fw={500}>
        Preview (job &quot;Immich&quot;, database &quot;photos&quot;, 19 Nov 2026 10:05:09 UTC shown in {timeZone})
      </Text>
      {'name' in result ? (
        <Code data-testid="naming-preview">{result.name}</Code>
      ) : (
        <Text size="sm" fw={600} data-testid="naming-problem">
          {result.problem}
        </Text>
      )}
    </div>
  );
}

function TemplateForm({ template, onDone }: { template: Template | null; onDone: () => void }) {
  const [form, setForm] = useState({ name: template?.name ?? '', description: template?.description ?? '', pattern: template?.pattern ?? '{job_name}_yyyy-MM-dd_HH-mm-ss', isDefault: template?.isDefault ?? false });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const save = useSaveRecord(
    QUERY_KEY,
    () => {
      const body = { name: form.name.trim(), description: form.description.trim() || null, pattern: form.pattern, isDefault: form.isDefault };
      return template ? unwrap(api.PUT('/api/naming-templates/{id}', { params: { path: { id: template.id } }, body })) : unwrap(api.POST('/api/naming-templates', { body }));
    },
    onDone,
  );
  return (
    <EditorPanel
      title={template ? `Edit ${template.name}` : 'Add a naming template'}
      onSubmit={() => {
        const found: Record<string, string> = {};
        if (!form.name.trim()) found.name = 'Enter a name';
        if (!form.pattern.trim()) found.pattern = 'Enter a pattern';
        setErrors(found);
        if (Object.keys(found).length === 0) save.mutate();
      }}
      submitLabel="Save template"
      saving={save.isPending}
      error={save.error}
      errorTitle="Could not save the template"
      onCancel={onDone}
    >
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <TextInput label="Name" required value={form.name} error={errors.name} onChange={(event) => setForm({ ...form, name: event.currentTarget.value })} data-field="naming-name" />
        <TextInput label="Description" value={form.description} onChange={(event) => setForm({ ...form, description: event.currentTarget.value })} />
      </SimpleGrid>
      <TextInput
        label="Pattern"
        required
        description="Tokens: {job_name}, {db_name}, {chain}; dates: yyyy yy MMM MM dd HH mm ss SSS; text in single quotes is literal"
        value={form.pattern}
        error={errors.pattern}
        onChange={(event) => setForm({ ...form, pattern: event.currentTarget.value })}
        data-field="naming-pattern"
      />
      <LivePreview pattern={form.pattern} />
      <Switch label="Default template (used by jobs that name none)" checked={form.isDefault} onChange={(event) => setForm({ ...form, isDefault: event.currentTarget.checked })} />
    </EditorPanel>
  );
}

/** Naming templates: how backup files are named, with a live preview of the rendered name. */
export default function NamingTemplatesPage() {
  const templates = useQuery({ queryKey: QUERY_KEY, queryFn: loadTemplates });
  const [editing, setEditing] = useState<Template | 'new' | null>(null);
  const remove = useDeleteRecord(QUERY_KEY, (id) => unwrap(api.DELETE('/api/naming-templates/{id}', { params: { path: { id } } })));
  return (
    <Stack>
      <PageHeader title="Naming templates">
        <Button onClick={() => setEditing('new')}>Add template</Button>
      </PageHeader>
      {editing && <TemplateForm key={editing === 'new' ? 'new' : editing.id} template={editing === 'new' ? null : editing} onDone={() => setEditing(null)} />}
      {remove.error && <ErrorAlert error={remove.error} title="Could not delete the template" />}
      <QueryState isPending={templates.isPending} error={templates.error} isEmpty={templates.data?.length === 0} empty="No naming templates yet.">
        <RecordTable
          records={templates.data}
          headers={['Name', 'Pattern', 'Flags']}
          minWidth={640}
          rowTestId="naming-row"
          cells={(template) => (
            <>
              <Table.Td>{template.name}</Table.Td>
              <Table.Td>
                <Code>{template.pattern}</Code>
              </Table.Td>
              <Table.Td>
                <Group gap={4}>
                  {template.isDefault && <ToneBadge color="blue">default</ToneBadge>}
                  {template.isSystem && <ToneBadge color="gray">built-in</ToneBadge>}
                </Group>
              </Table.Td>
            </>
          )}
          actions={(template) => (
            <>
              <EditButton name={template.name} onClick={() => setEditing(template)} />
              {!template.isSystem && <DeleteButton name={template.name} onDelete={() => remove.mutate(template.id)} />}
            </>
          )}
        />
      </QueryState>
    </Stack>
  );
}
