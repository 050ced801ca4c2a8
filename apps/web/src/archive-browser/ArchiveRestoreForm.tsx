import { Button, Group, Stack, Text } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, errorMessage, unwrap } from '../api/client';
import { useSafeRestoreTarget } from '../restore/SafeRestoreTarget';
import { ErrorAlert } from '../components/PageState';
import type { RestoreBody } from './archive-listing';


interface ArchiveRestoreFormProps {
  storageId: string;
  file: string;
  /** Archive paths (directory archives) or database names (database archives), as the restore request takes them. */
  paths: string[];
  isDatabaseArchive: boolean;
}

/**
 * Queues a restore of the selected parts of a seekable archive and opens the run, like the page's whole-backup
 * restore does. Only the selected members are read from the storage (range reads).
 */
export function ArchiveRestoreForm({ storageId, file, paths, isDatabaseArchive }: ArchiveRestoreFormProps) {
  const navigate = useNavigate();
  const target = useSafeRestoreTarget(isDatabaseArchive ? paths : [], { kind: isDatabaseArchive ? 'database' : 'folder' });
  const restore = useMutation({
    mutationFn: (body: RestoreBody) => unwrap(api.POST('/api/storage/{id}/restore', { params: { path: { id: storageId } }, body })),
    onSuccess: (answer) => navigate(`/runs/${answer.executionId}`),
    onError: (error) => {
      if (/is not empty/.test(errorMessage(error))) target.refusedNonEmpty(errorMessage(error));
    },
  });
  const start = () => {
    if (target.body) restore.mutate({ file, paths, ...target.body });
  };
  return (
    <Stack gap="sm">
      {target.fields}
      {restore.error && <ErrorAlert error={restore.error} title="Restore refused" />}
      <Group justify="space-between">
        <Text size="sm" c="dimmed" data-testid="archive-selection-count">
          {paths.length === 0 ? 'Nothing selected yet.' : `${paths.length} selected`}
        </Text>
        <Button onClick={start} disabled={paths.length === 0 || !target.body} loading={restore.isPending} data-testid="archive-restore-start">
          Restore selected
        </Button>
      </Group>
    </Stack>
  );
}
