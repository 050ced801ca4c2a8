import { Button, Group, Radio, Select, Stack, Text, TextInput } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { useAdapters } from '../api/adapters';
import { api, unwrap } from '../api/client';
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
  const [placement, setPlacement] = useState<DirectoryPlacement>({ mode: 'folder', folder: '' });
  const [databases, setDatabases] = useState<DatabaseTarget>({ sourceId: null, renames: {} });
  const [problem, setProblem] = useState<string | null>(null);
  const restore = useMutation({
    mutationFn: (body: RestoreBody) => unwrap(api.POST('/api/storage/{id}/restore', { params: { path: { id: storageId } }, body })),
    onSuccess: (answer) => navigate(`/runs/${answer.executionId}`),
  });
  const start = () => {
    const target = isDatabaseArchive ? databaseTargetBody(databases, paths) : directoryTargetBody(placement);
    if ('problem' in target) return setProblem(target.problem);
    setProblem(null);
    restore.mutate({ file, paths, ...target });
  };
  return (
    <Stack gap="sm">
      {isDatabaseArchive ? <DatabaseTargetFields value={databases} selected={paths} onChange={setDatabases} /> : <DirectoryPlacementFields value={placement} error={problem} onChange={setPlacement} />}
      {restore.error && <ErrorAlert error={restore.error} title="Restore refused" />}
      <Group justify="space-between">
        <Text size="sm" c="dimmed" data-testid="archive-selection-count">
          {paths.length === 0 ? 'Nothing selected yet.' : `${paths.length} selected`}
        </Text>
        <Button onClick={start} disabled={paths.length === 0} loading={restore.isPending} data-testid="archive-restore-start">
          Restore selected
        </Button>
      </Group>
    </Stack>
  );
}

/** Directory archives land below a chosen folder, or back where they were backed up from. */
interface DirectoryPlacement {
  mode: 'folder' | 'original';
  folder: string;
}

function directoryTargetBody(placement: DirectoryPlacement): Partial<RestoreBody> | { problem: string } {
  if (placement.mode === 'original') return { restoreToOriginalPaths: true };
  const folder = placement.folder.trim();
  if (!folder.startsWith('/')) return { problem: 'Enter an absolute folder path, e.g. /srv/restore' };
  return { targetPath: folder };
}

function DirectoryPlacementFields({ value, error, onChange }: { value: DirectoryPlacement; error: string | null; onChange(next: DirectoryPlacement): void }) {
  return (
    <Stack gap="xs">
      <Radio.Group label="Restore to" value={value.mode} onChange={(mode) => onChange({ ...value, mode: mode as DirectoryPlacement['mode'] })}>
        <Group mt={4}>
          <Radio value="folder" label="A folder" />
          <Radio value="original" label="The original paths (overwrites files there)" />
        </Group>
      </Radio.Group>
      {value.mode === 'folder' && (
        <TextInput
          label="Target folder"
          description="Absolute path on the server, created when missing; the selection keeps its archive paths below it"
          required
          value={value.folder}
          error={error}
          onChange={(event) => onChange({ ...value, folder: event.currentTarget.value })}
          data-field="archive-restore-folder"
        />
      )}
    </Stack>
  );
}

/** Database archives restore into a source (default: the backup's own), each database under its name or a new one. */
interface DatabaseTarget {
  sourceId: string | null;
  renames: Record<string, string>;
}

function databaseTargetBody(target: DatabaseTarget, selected: string[]): Partial<RestoreBody> {
  const mapping = Object.fromEntries(selected.map((name) => [name, target.renames[name]?.trim() ?? '']).filter(([, renamed]) => renamed));
  return { ...(target.sourceId ? { targetSourceId: target.sourceId } : {}), ...(Object.keys(mapping).length > 0 ? { databaseMapping: mapping } : {}) };
}

function DatabaseTargetFields({ value, selected, onChange }: { value: DatabaseTarget; selected: string[]; onChange(next: DatabaseTarget): void }) {
  const sources = useAdapters('database');
  // Sources flagged as excluded are never restore targets (often production databases); the server refuses them too.
  const targets = (sources.data ?? []).filter((source) => !source.excludeFromRestore);
  return (
    <Stack gap="xs">
      <Select
        label="Restore into"
        description="A source configuration; empty: the backup's own source"
        data={targets.map((source) => ({ value: source.id, label: source.name }))}
        value={value.sourceId}
        onChange={(sourceId) => onChange({ ...value, sourceId })}
        clearable
        placeholder="The backup's own source"
        data-field="archive-restore-source"
      />
      {selected.map((database) => (
        <TextInput
          key={database}
          label={`Target database for ${database}`}
          description="Empty: the original name"
          value={value.renames[database] ?? ''}
          onChange={(event) => onChange({ ...value, renames: { ...value.renames, [database]: event.currentTarget.value } })}
        />
      ))}
    </Stack>
  );
}
