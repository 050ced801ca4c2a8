import { Center, Drawer, Loader, Stack, Text, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorAlert } from '../components/PageState';
import { ArchiveEntryTable, SHOWN_ENTRIES } from './ArchiveEntryTable';
import { ArchiveRestoreForm } from './ArchiveRestoreForm';
import { baseName, isDatabaseArchive, matchesFilter, pathsToRestore, restorableEntries, type ArchiveListing } from './archive-listing';
import { ChainSummary } from './ChainSummary';

interface ArchiveBrowserProps {
  storageId: string;
  /** Path of the seekable backup within the storage. */
  file: string;
  onClose(): void;
}

/**
 * The storage page's "Browse" view of a seekable backup: its chain position, its entries (from the index sidecar,
 * so opening it reads no archive bytes) and a restore of the selected ones.
 */
export function ArchiveBrowser({ storageId, file, onClose }: ArchiveBrowserProps) {
  const listing = useQuery({
    queryKey: ['storage-archive', storageId, file],
    queryFn: () => unwrap(api.GET('/api/storage/{id}/archive', { params: { path: { id: storageId }, query: { file } } })),
    // A stored backup never changes; its chain can only break, which the restore then reports.
    staleTime: Infinity,
  });
  return (
    <Drawer
      opened
      onClose={onClose}
      position="right"
      size="xl"
      title={`Browse ${baseName(file)}`}
      closeButtonProps={{ 'aria-label': 'Close the archive browser' }}
      data-testid="archive-browser"
    >
      {listing.isPending && (
        <Center py="xl" aria-busy="true">
          <Loader aria-label="Loading the archive's index" />
        </Center>
      )}
      {listing.error && <ErrorAlert error={listing.error} title="This backup cannot be listed" />}
      {listing.data && <ArchiveSnapshot storageId={storageId} file={file} listing={listing.data} />}
    </Drawer>
  );
}

function ArchiveSnapshot({ storageId, file, listing }: { storageId: string; file: string; listing: ArchiveListing }) {
  const [filter, setFilter] = useState('');
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const entries = useMemo(() => restorableEntries(listing), [listing]);
  const shown = useMemo(() => entries.filter((entry) => matchesFilter(entry, filter)), [entries, filter]);
  const isDatabase = isDatabaseArchive(listing);
  const toggle = (key: string, isSelected: boolean) =>
    setSelected((previous) => {
      const next = new Set(previous);
      if (isSelected) next.add(key);
      else next.delete(key);
      return next;
    });
  return (
    <Stack>
      <ChainSummary listing={listing} />
      <TextInput
        label="Filter"
        description={isDatabase ? 'Part of a database name' : 'Part of a path'}
        value={filter}
        onChange={(event) => setFilter(event.currentTarget.value)}
        data-field="archive-filter"
      />
      <Text size="sm" c="dimmed" data-testid="archive-entry-count">
        {shown.length} of {entries.length} {isDatabase ? 'databases' : 'entries'}
        {shown.length > SHOWN_ENTRIES && `; the first ${SHOWN_ENTRIES} are shown, narrow the filter to see the rest`}
      </Text>
      <ArchiveEntryTable entries={shown} file={file} selected={selected} onToggle={toggle} />
      <ArchiveRestoreForm storageId={storageId} file={file} paths={pathsToRestore(selected)} isDatabaseArchive={isDatabase} />
    </Stack>
  );
}
