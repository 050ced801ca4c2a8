import { Button, CloseButton, Group, Select, Stack, Table, Text, TextInput, VisuallyHidden } from '@mantine/core';

interface Row {
  claimValue: string;
  groupId: string;
}

/**
 * The group mapping table of a provider: a group value as the identity provider sends it, and the Holdfast group it
 * grants. Without permission to list groups, the group is typed as its id.
 */
export function GroupMappingTable({
  rows,
  groups,
  errors,
  disabled,
  onChange,
}: {
  rows: Row[];
  groups: Array<{ id: string; name: string }> | undefined;
  errors: Record<string, string>;
  disabled?: boolean;
  onChange(rows: Row[]): void;
}) {
  const set = (index: number, patch: Partial<Row>) => onChange(rows.map((row, i) => (i === index ? { ...row, ...patch } : row)));
  return (
    <Stack gap="xs">
      <Text size="sm" fw={500}>
        Group mapping
      </Text>
      <Text size="xs" c="dimmed">
        Checked on every sign-in: the first row whose value the user has sets their group; no match clears it.
      </Text>
      {rows.length > 0 && (
        <Table.ScrollContainer minWidth={480}>
          <Table data-testid="group-mappings">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Value from the identity provider</Table.Th>
                <Table.Th>Holdfast group</Table.Th>
                <Table.Th>
                  <VisuallyHidden>Remove</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((row, index) => (
                <Table.Tr key={index}>
                  <Table.Td>
                    <TextInput
                      aria-label={`Value from the identity provider, row ${index + 1}`}
                      value={row.claimValue}
                      error={errors[`groupMappings.${index}.claimValue`]}
                      disabled={disabled}
                      onChange={(event) => set(index, { claimValue: event.currentTarget.value })}
                      data-field={`mapping-value-${index}`}
                    />
                  </Table.Td>
                  <Table.Td>
                    {groups ? (
                      <Select
                        aria-label={`Holdfast group, row ${index + 1}`}
                        data={groups.map((group) => ({ value: group.id, label: group.name }))}
                        value={row.groupId || null}
                        error={errors[`groupMappings.${index}.groupId`]}
                        disabled={disabled}
                        onChange={(value) => set(index, { groupId: value ?? '' })}
                        data-field={`mapping-group-${index}`}
                      />
                    ) : (
                      <TextInput
                        aria-label={`Holdfast group id, row ${index + 1}`}
                        value={row.groupId}
                        error={errors[`groupMappings.${index}.groupId`]}
                        disabled={disabled}
                        onChange={(event) => set(index, { groupId: event.currentTarget.value })}
                        data-field={`mapping-group-${index}`}
                      />
                    )}
                  </Table.Td>
                  <Table.Td>
                    <CloseButton aria-label={`Remove row ${index + 1}`} disabled={disabled} onClick={() => onChange(rows.filter((_, i) => i !== index))} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <Group>
        <Button size="xs" variant="default" disabled={disabled} onClick={() => onChange([...rows, { claimValue: '', groupId: '' }])}>
          Add mapping
        </Button>
      </Group>
    </Stack>
  );
}
