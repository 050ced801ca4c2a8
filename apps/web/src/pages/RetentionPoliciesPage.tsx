import { Button, Group, NumberInput, Select, SimpleGrid, Stack, Switch, Table, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { withStepUp } from '../security/StepUp';
import { ErrorAlert, QueryState } from '../components/PageState';
import { ToneBadge } from '../components/StatusBadge';
import { EditorPanel } from '../configuration/EditorPanel';
import { PageHeader } from '../configuration/PageHeader';
import { DeleteButton, EditButton, RecordTable } from '../configuration/RecordTable';
import { useDeleteRecord, useSaveRecord } from '../configuration/useRecordMutations';
import { describeRetention, EMPTY_RETENTION, GFS_TIERS, retentionConfig, retentionFromConfig, type RetentionForm, type RetentionMode } from '../configuration/retention';

type Policy = Awaited<ReturnType<typeof loadPolicies>>[number];

const QUERY_KEY = ['retention-policies'];

function loadPolicies() {
  return unwrap(api.GET('/api/retention-policies'));
}

function PolicyForm({ policy, onDone }: { policy: Policy | null; onDone: () => void }) {
  const [name, setName] = useState(policy?.name ?? '');
  const [description, setDescription] = useState(policy?.description ?? '');
  const [isDefault, setIsDefault] = useState(policy?.isDefault ?? false);
  const [rules, setRules] = useState<RetentionForm>(policy ? retentionFromConfig(policy.config) : EMPTY_RETENTION);
  const [nameError, setNameError] = useState('');
  const save = useSaveRecord(
    QUERY_KEY,
    () => {
      const body = { name: name.trim(), description: description.trim() || null, isDefault, config: retentionConfig(rules) };
      // Changed rules need a fresh second factor (issue 45.4): asked for when the server says so.
      return policy ? withStepUp(() => unwrap(api.PUT('/api/retention-policies/{id}', { params: { path: { id: policy.id } }, body }))) : unwrap(api.POST('/api/retention-policies', { body }));
    },
    onDone,
  );
  return (
    <EditorPanel
      title={policy ? `Edit ${policy.name}` : 'Add a retention policy'}
      onSubmit={() => {
        if (!name.trim()) return setNameError('Enter a name');
        setNameError('');
        save.mutate();
      }}
      submitLabel="Save policy"
      saving={save.isPending}
      error={save.error}
      errorTitle="Could not save the policy"
      onCancel={onDone}
    >
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <TextInput label="Name" required value={name} error={nameError} onChange={(event) => setName(event.currentTarget.value)} data-field="policy-name" />
        <TextInput label="Description" value={description} onChange={(event) => setDescription(event.currentTarget.value)} />
      </SimpleGrid>
      <Select
        label="Mode"
        data={[
          { value: 'keep-all', label: 'Keep every backup' },
          { value: 'keep-last', label: 'Keep the newest N backups' },
          { value: 'gfs', label: 'Grandfather-father-son (per hour, day, week, month, year)' },
        ]}
        value={rules.mode}
        allowDeselect={false}
        onChange={(value) => value && setRules({ ...rules, mode: value as RetentionMode })}
        data-field="policy-mode"
      />
      {rules.mode === 'keep-last' && <NumberInput label="Backups to keep" min={1} value={rules.count} onChange={(value) => setRules({ ...rules, count: Number(value) || 1 })} data-field="policy-count" />}
      {rules.mode === 'gfs' && (
        <SimpleGrid cols={{ base: 2, sm: 5 }}>
          {GFS_TIERS.map((tier) => (
            <NumberInput
              key={tier}
              label={tier[0]!.toUpperCase() + tier.slice(1)}
              min={0}
              value={rules.tiers[tier]}
              onChange={(value) => setRules({ ...rules, tiers: { ...rules.tiers, [tier]: Number(value) || 0 } })}
              data-field={`policy-${tier}`}
            />
          ))}
        </SimpleGrid>
      )}
      <Switch label="Default policy (used by destinations that name none)" checked={isDefault} onChange={(event) => setIsDefault(event.currentTarget.checked)} />
    </EditorPanel>
  );
}

/** Retention policies: which backups a destination keeps. Built-in ones are read-only. */
export default function RetentionPoliciesPage() {
  const policies = useQuery({ queryKey: QUERY_KEY, queryFn: loadPolicies });
  const [editing, setEditing] = useState<Policy | 'new' | null>(null);
  const remove = useDeleteRecord(QUERY_KEY, (id) => unwrap(api.DELETE('/api/retention-policies/{id}', { params: { path: { id } } })));
  return (
    <Stack>
      <PageHeader title="Retention policies">
        <Button onClick={() => setEditing('new')}>Add policy</Button>
      </PageHeader>
      {editing && <PolicyForm key={editing === 'new' ? 'new' : editing.id} policy={editing === 'new' ? null : editing} onDone={() => setEditing(null)} />}
      {remove.error && <ErrorAlert error={remove.error} title="Could not delete the policy" />}
      <QueryState isPending={policies.isPending} error={policies.error} isEmpty={policies.data?.length === 0} empty="No retention policies yet.">
        <RecordTable
          records={policies.data}
          headers={['Name', 'Rules', 'Flags']}
          minWidth={640}
          rowTestId="policy-row"
          cells={(policy) => (
            <>
              <Table.Td>{policy.name}</Table.Td>
              <Table.Td>{describeRetention(policy.config)}</Table.Td>
              <Table.Td>
                <Group gap={4}>
                  {policy.isDefault && <ToneBadge color="blue">default</ToneBadge>}
                  {policy.isSystem && <ToneBadge color="gray">built-in</ToneBadge>}
                </Group>
              </Table.Td>
            </>
          )}
          actions={(policy) => (
            <>
              <EditButton name={policy.name} onClick={() => setEditing(policy)} />
              {!policy.isSystem && <DeleteButton name={policy.name} onDelete={() => remove.mutate(policy.id)} />}
            </>
          )}
        />
      </QueryState>
    </Stack>
  );
}
