import { Checkbox, Table, Text, VisuallyHidden } from '@mantine/core';
import { formatBytes, formatDate } from '../components/format';
import { baseName, coveringFolder, selectionKeyOf, type ArchiveEntry } from './archive-listing';

/** Rendering a whole large archive would freeze the page; the filter narrows what is shown instead. */
export const SHOWN_ENTRIES = 500;

const KIND_LABELS: Record<ArchiveEntry['kind'], string> = {
  file: 'file',
  directory: 'folder',
  symlink: 'symlink',
  hardlink: 'hard link',
  'database-dump': 'database',
};

interface ArchiveEntryTableProps {
  entries: ArchiveEntry[];
  /** The browsed backup: entries it holds itself read "this backup" rather than its name. */
  file: string;
  selected: ReadonlySet<string>;
  onToggle(key: string, isSelected: boolean): void;
}

/** The archive's entries with a checkbox each; a folder's checkbox brings everything below it along. */
export function ArchiveEntryTable({ entries, file, selected, onToggle }: ArchiveEntryTableProps) {
  return (
    <Table.ScrollContainer minWidth={720}>
      <Table striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={40}>
              <VisuallyHidden>Selected</VisuallyHidden>
            </Table.Th>
            <Table.Th>Path</Table.Th>
            <Table.Th>Kind</Table.Th>
            <Table.Th>Size</Table.Th>
            <Table.Th>Modified</Table.Th>
            <Table.Th>Held in</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {entries.slice(0, SHOWN_ENTRIES).map((entry) => (
            <ArchiveEntryRow key={entry.path} entry={entry} file={file} selected={selected} onToggle={onToggle} />
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

function ArchiveEntryRow({ entry, file, selected, onToggle }: { entry: ArchiveEntry } & Omit<ArchiveEntryTableProps, 'entries'>) {
  const key = selectionKeyOf(entry);
  const folder = coveringFolder(entry.path, selected);
  const name = entry.kind === 'database-dump' && entry.database ? entry.database : entry.path;
  const isThisBackup = baseName(entry.archive) === baseName(file);
  return (
    <Table.Tr data-testid="archive-entry" data-path={entry.path}>
      <Table.Td>
        <Checkbox
          aria-label={`Select ${name}`}
          checked={selected.has(key) || Boolean(folder)}
          // A path below a selected folder is restored with it; unticking it alone cannot leave it out.
          disabled={Boolean(folder)}
          title={folder ? `Restored with ${folder}` : undefined}
          onChange={(event) => onToggle(key, event.currentTarget.checked)}
        />
      </Table.Td>
      <Table.Td>
        <Text size="sm" style={{ wordBreak: 'break-all' }}>
          {name}
          {entry.target && (
            <Text span size="sm" c="dimmed">
              {' → '}
              {entry.target}
            </Text>
          )}
        </Text>
      </Table.Td>
      <Table.Td>{KIND_LABELS[entry.kind]}</Table.Td>
      <Table.Td>{formatBytes(entry.size)}</Table.Td>
      <Table.Td>{formatDate(entry.mtime)}</Table.Td>
      <Table.Td>
        <Text size="sm" c={isThisBackup ? undefined : 'dimmed'} style={{ wordBreak: 'break-all' }}>
          {isThisBackup ? 'this backup' : baseName(entry.archive)}
        </Text>
      </Table.Td>
    </Table.Tr>
  );
}
