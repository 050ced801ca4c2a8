import { ActionIcon, Button, Checkbox, Fieldset, Group, MultiSelect, Select, SimpleGrid, Stack, Table, Text, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorAlert, QueryState } from '../components/PageState';
import { EditorPanel } from '../configuration/EditorPanel';
import { PageHeader } from '../configuration/PageHeader';
import { DeleteButton, EditButton, RecordTable } from '../configuration/RecordTable';
import { useDeleteRecord, useSaveRecord } from '../configuration/useRecordMutations';
import { RESOURCE_LABELS, useScopeChoices } from '../configuration/scoped-resources';

type GroupRecord = Awaited<ReturnType<typeof loadGroups>>['groups'][number];
type Grant = GroupRecord['grants'][number];
type PermissionsAnswer = Awaited<ReturnType<typeof loadPermissions>>;

const QUERY_KEY = ['groups'];

function loadGroups() {
  return unwrap(api.GET('/api/groups'));
}
function loadPermissions() {
  return unwrap(api.GET('/api/permissions'));
}

/** Permissions grouped by their area (the part before the colon: jobs, storage, settings...). */
function byArea(permissions: PermissionsAnswer['permissions']) {
  const areas = new Map<string, PermissionsAnswer['permissions']>();
  for (const permission of permissions) {
    const area = permission.name.split(':')[0]!;
    areas.set(area, [...(areas.get(area) ?? []), permission]);
  }
  return [...areas.entries()];
}

/** Permissions limited to named records: resource type, permission, and which records. */
function GrantsEditor({ grants, onChange, scopable }: { grants: Grant[]; onChange: (grants: Grant[]) => void; scopable: Record<string, string[]> }) {
  const choices = useScopeChoices();
  const update = (index: number, change: Partial<Grant>) => onChange(grants.map((grant, at) => (at === index ? { ...grant, ...change } : grant)));
  return (
    <Fieldset legend="Scoped grants (permissions on named records only)">
      <Stack gap="xs">
        {grants.length === 0 && (
          <Text size="sm">
            None.
          </Text>
        )}
        {grants.map((grant, index) => (
          <Group key={index} align="flex-end" gap="xs" data-testid="grant-row">
            <Select
              label="Resource type"
              w={190}
              allowDeselect={false}
              data={Object.keys(scopable).map((type) => ({ value: type, label: RESOURCE_LABELS[type] ?? type }))}
              value={grant.resourceType}
              onChange={(value) => value && update(index, { resourceType: value, permission: scopable[value]![0]!, resourceIds: [] })}
            />
            <Select label="Permission" w={190} allowDeselect={false} data={scopable[grant.resourceType] ?? []} value={grant.permission} onChange={(value) => value && update(index, { permission: value })} />
            <MultiSelect
              label="Records"
              miw={220}
              style={{ flex: 1 }}
              data={choices[grant.resourceType] ?? []}
              value={grant.resourceIds}
              onChange={(resourceIds) => update(index, { resourceIds })}
              placeholder="Choose records"
            />
            <ActionIcon variant="default" size="lg" aria-label={`Remove grant ${index + 1}`} onClick={() => onChange(grants.filter((_, at) => at !== index))}>
              <span aria-hidden="true">×</span>
            </ActionIcon>
          </Group>
        ))}
        <Group>
          <Button
            size="xs"
            variant="default"
            onClick={() => {
              const type = Object.keys(scopable)[0]!;
              onChange([...grants, { resourceType: type, permission: scopable[type]![0]!, resourceIds: [] }]);
            }}
          >
            Add scoped grant
          </Button>
        </Group>
      </Stack>
    </Fieldset>
  );
}

function GroupForm({ group, permissions, onDone }: { group: GroupRecord | null; permissions: PermissionsAnswer; onDone: () => void }) {
  const [name, setName] = useState(group?.name ?? '');
  const [granted, setGranted] = useState<string[]>(group?.permissions ?? []);
  const [grants, setGrants] = useState<Grant[]>(group?.grants ?? []);
  const [error, setError] = useState('');
  const save = useSaveRecord(
    QUERY_KEY,
    () => {
      const body = { name: name.trim(), permissions: granted, grants };
      return group ? unwrap(api.PUT('/api/groups/{id}', { params: { path: { id: group.id } }, body })) : unwrap(api.POST('/api/groups', { body }));
    },
    onDone,
  );
  const scopable = permissions.scopableResources as Record<string, string[]>;
  return (
    <EditorPanel
      title={group ? `Edit ${group.name}` : 'Add a group'}
      onSubmit={() => {
        if (!name.trim()) return setError('Enter a name');
        const unfinished = grants.findIndex((grant) => grant.resourceIds.length === 0);
        if (unfinished >= 0) return setError(`Scoped grant ${unfinished + 1} names no records: choose some or remove it`);
        setError('');
        save.mutate();
      }}
      submitLabel="Save group"
      saving={save.isPending}
      error={save.error}
      errorTitle="Could not save the group"
      onCancel={onDone}
    >
      <TextInput label="Name" required value={name} error={error === 'Enter a name' ? error : undefined} onChange={(event) => setName(event.currentTarget.value)} data-field="group-name" />
      <Text size="sm" fw={500}>
        Permissions on every record
      </Text>
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }}>
        {byArea(permissions.permissions).map(([area, entries]) => (
          <Fieldset key={area} legend={area}>
            <Stack gap={6}>
              {entries.map((permission) => (
                <Checkbox
                  key={permission.name}
                  label={permission.name}
                  description={permission.description}
                  checked={granted.includes(permission.name)}
                  onChange={(event) => setGranted(event.currentTarget.checked ? [...granted, permission.name] : granted.filter((entry) => entry !== permission.name))}
                />
              ))}
            </Stack>
          </Fieldset>
        ))}
      </SimpleGrid>
      <GrantsEditor grants={grants} onChange={setGrants} scopable={scopable} />
      {error && error !== 'Enter a name' && (
        <Text fw={600} size="sm" role="alert">
          {error}
        </Text>
      )}
    </EditorPanel>
  );
}

/** Groups: what their members may do, on everything or on named records (scoped grants). */
export default function GroupsPage() {
  const groups = useQuery({ queryKey: QUERY_KEY, queryFn: loadGroups });
  const permissions = useQuery({ queryKey: ['permissions'], queryFn: loadPermissions });
  const [editing, setEditing] = useState<GroupRecord | 'new' | null>(null);
  const remove = useDeleteRecord(QUERY_KEY, (id) => unwrap(api.DELETE('/api/groups/{id}', { params: { path: { id } } })));
  return (
    <Stack>
      <PageHeader title="Groups and permissions">
        <Button onClick={() => setEditing('new')} disabled={!permissions.data}>
          Add group
        </Button>
      </PageHeader>
      {permissions.error && <ErrorAlert error={permissions.error} title="Could not load the permissions" />}
      {editing && permissions.data && <GroupForm key={editing === 'new' ? 'new' : editing.id} group={editing === 'new' ? null : editing} permissions={permissions.data} onDone={() => setEditing(null)} />}
      {remove.error && <ErrorAlert error={remove.error} title="Could not delete the group" />}
      <QueryState isPending={groups.isPending} error={groups.error} isEmpty={groups.data?.groups.length === 0} empty="No groups yet.">
        <RecordTable
          records={groups.data?.groups}
          headers={['Group', 'Permissions', 'Scoped grants']}
          minWidth={640}
          rowTestId="group-row"
          cells={(group) => (
            <>
              <Table.Td>{group.name}</Table.Td>
              <Table.Td>{group.permissions.join(', ') || '—'}</Table.Td>
              <Table.Td>{group.grants.map((grant) => `${grant.permission} on ${grant.resourceIds.length} ${RESOURCE_LABELS[grant.resourceType]?.toLowerCase() ?? grant.resourceType}`).join('; ') || '—'}</Table.Td>
            </>
          )}
          actions={(group) => (
            <>
              <EditButton name={group.name} onClick={() => setEditing(group)} disabled={!permissions.data} />
              <DeleteButton name={group.name} onDelete={() => remove.mutate(group.id)} />
            </>
          )}
        />
      </QueryState>
    </Stack>
  );
}
