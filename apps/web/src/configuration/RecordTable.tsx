import { Button, Group, Table } from '@mantine/core';
import type { ReactNode } from 'react';

/**
 * The list table of a configuration page: one row per record, its cells, then an Actions cell.
 * Headers name the data columns only; the Actions column is added here so every page ends the same way.
 */
export function RecordTable<T extends { id: string }>(props: {
  records: T[] | undefined;
  headers: string[];
  minWidth: number;
  rowTestId: string;
  cells: (record: T) => ReactNode;
  actions: (record: T) => ReactNode;
}) {
  return (
    <Table.ScrollContainer minWidth={props.minWidth}>
      <Table striped>
        <Table.Thead>
          <Table.Tr>
            {props.headers.map((header) => (
              <Table.Th key={header}>{header}</Table.Th>
            ))}
            <Table.Th>Actions</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {props.records?.map((record) => (
            <Table.Tr key={record.id} data-testid={props.rowTestId}>
              {props.cells(record)}
              <Table.Td>
                <Group gap={4} wrap="nowrap">
                  {props.actions(record)}
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

export function EditButton({ name, onClick, disabled }: { name: string; onClick: () => void; disabled?: boolean }) {
  return (
    <Button size="xs" variant="default" aria-label={`Edit ${name}`} onClick={onClick} disabled={disabled}>
      Edit
    </Button>
  );
}

/** Deletes only after the browser's confirm dialog; `question` replaces the plain "Delete <name>?" when more needs saying. */
export function DeleteButton({ name, onDelete, question }: { name: string; onDelete: () => void; question?: string }) {
  return (
    <Button size="xs" color="red" variant="outline" aria-label={`Delete ${name}`} onClick={() => window.confirm(question ?? `Delete ${name}?`) && onDelete()}>
      Delete
    </Button>
  );
}
