import { Alert, Checkbox, Group, Loader, Radio, Select, Stack, Table, Text, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { useAdapters } from '../api/adapters';
import { useAuth } from '../auth/AuthProvider';
import { api, errorMessage, unwrap } from '../api/client';
import { formatBytes } from '../components/format';

// Issue 47: the restore wizard. The target source's databases are listed first (that is also the connection check),
// a new database name is the default, and replacing an existing database needs its name typed. The API refuses an
// overwrite the request does not ask for (409), so this is the friendly half of the same rule.

/** `<db>_restored_<YYYYMMDD>` (today, local date): the default target, a database that does not exist yet. */
export function defaultRestoreName(database: string, now = new Date()): string {
  const day = `${now.getFullYear()}${String(now.getMonth() + 1).padStart(2, '0')}${String(now.getDate()).padStart(2, '0')}`;
  return `${database}_restored_${day}`;
}

/** Adapters whose restores write files into a folder rather than into named databases. */
const FOLDER_ADAPTERS = new Set(['directory']);

export interface SafeTarget {
  /** The form fields (source, databases list, names, warnings, confirmations). */
  fields: ReactNode;
  /** The restore body's target part, or null while something is missing or unconfirmed. */
  body: Record<string, unknown> | null;
  /** Called with the API's answer when a folder restore was refused because the folder is not empty. */
  refusedNonEmpty(message: string): void;
}

function useSourceDatabases(sourceId: string | null) {
  return useQuery({
    queryKey: ['source-databases', sourceId],
    queryFn: () => unwrap(api.GET('/api/adapters/{id}/databases', { params: { path: { id: sourceId! } } })),
    enabled: Boolean(sourceId),
    retry: false,
    staleTime: 0,
  });
}

/**
 * The target of a restore: a source, then (database sources) one name per backed-up database, defaulting to a new
 * name, or (directory sources) a folder or the original paths. `originals` are the database names of the backup.
 */
export function useSafeRestoreTarget(originals: string[], options: { kind?: 'auto' | 'folder' | 'database' } = {}): SafeTarget {
  // Listing sources and their databases needs sources:read; without it nothing is asked and no target is offered.
  const sources = useAdapters('database', useAuth().can('sources:read'));
  const [sourceId, setSourceId] = useState<string | null>(null);
  // Only what the user typed; a database not typed for yet gets the default new name.
  const [edited, setNames] = useState<Record<string, string>>({});
  const [confirmations, setConfirmations] = useState<Record<string, string>>({});
  const [folder, setFolder] = useState({ mode: 'folder' as 'folder' | 'original', path: '', confirmed: false, refusal: null as string | null });
  /** setuid/setgid/sticky bits and owners: off by default, they are dropped and named in the run's warnings (issue 41). */
  const [keepSpecialModes, setKeepSpecialModes] = useState(false);
  const listing = useSourceDatabases(sourceId);
  // Sources flagged as excluded are never restore targets (often production databases); the server refuses them too.
  const targets = (sources.data ?? []).filter((source) => !source.excludeFromRestore);
  const chosen = targets.find((source) => source.id === sourceId);
  // kind 'folder' (a directory archive): the backup's own source restores it, no source to choose.
  const folderOnly = options.kind === 'folder';
  const folderTarget = folderOnly || (options.kind !== 'database' && chosen !== undefined && FOLDER_ADAPTERS.has(chosen.adapterId));

  const sourceSelect = (
    <Select
      label="Restore into source"
      description="The source configuration to restore into (sources excluded from restores are not offered). Its databases are listed below once it answers."
      placeholder="Choose a source"
      data={targets.map((source) => ({ value: source.id, label: source.name }))}
      value={sourceId}
      onChange={(next) => {
        setSourceId(next);
        setConfirmations({});
        setFolder((current) => ({ ...current, confirmed: false, refusal: null }));
      }}
      required
      data-field="restore-target"
    />
  );

  if (folderTarget) {
    const path = folder.path.trim();
    const pathProblem = folder.mode === 'folder' && path !== '' && !path.startsWith('/') ? 'Enter an absolute folder path, e.g. /srv/restore' : null;
    const needsConfirm = folder.mode === 'original' || folder.refusal !== null;
    const ready = folder.mode === 'original' ? folder.confirmed : path.startsWith('/') && (!needsConfirm || folder.confirmed);
    return {
      body: ready ? { ...(sourceId ? { targetSourceId: sourceId } : {}), ...(folder.mode === 'original' ? { restoreToOriginalPaths: true } : { targetPath: path }), ...(needsConfirm ? { overwrite: true } : {}), ...(keepSpecialModes ? { keepSpecialModes: true } : {}) } : null,
      refusedNonEmpty: (message) => setFolder((current) => ({ ...current, refusal: message, confirmed: false })),
      fields: (
        <Stack gap="xs">
          {!folderOnly && sourceSelect}
          <Radio.Group label="Restore to" value={folder.mode} onChange={(mode) => setFolder({ ...folder, mode: mode as 'folder' | 'original', confirmed: false, refusal: null })}>
            <Group mt={4}>
              <Radio value="folder" label="A folder" />
              <Radio value="original" label="The original paths (overwrites files there)" />
            </Group>
          </Radio.Group>
          {folder.mode === 'folder' && (
            <TextInput
              label="Target folder"
              description="Absolute path on the server. A new or empty folder is restored into directly; a folder that already holds files needs your confirmation."
              required
              value={folder.path}
              error={pathProblem}
              onChange={(event) => setFolder({ ...folder, path: event.currentTarget.value, refusal: null, confirmed: false })}
              data-field={folderOnly ? 'archive-restore-folder' : 'restore-folder'}
            />
          )}
          <Checkbox
            label="Keep setuid, setgid and sticky bits, with the archived owners"
            description="Off: those bits are dropped and each such file is named in the run's warnings. On: Holdfast must run as root to restore owners."
            checked={keepSpecialModes}
            onChange={(event) => setKeepSpecialModes(event.currentTarget.checked)}
            data-field="restore-keep-special-modes"
          />
          {needsConfirm && (
            <Alert color="red" title="Files will be replaced" data-testid="restore-overwrite-warning">
              <Stack gap="xs">
                <Text size="sm">
                  {folder.mode === 'original'
                    ? 'Every file of the backup is put back where it was backed up from: files of the same name there are replaced by the backed-up version.'
                    : `${folder.refusal ?? ''} Files of the same name in that folder are replaced; other files are kept.`}
                </Text>
                <Checkbox
                  label="Replace the existing files"
                  checked={folder.confirmed}
                  onChange={(event) => setFolder({ ...folder, confirmed: event.currentTarget.checked })}
                  data-field="restore-overwrite-files"
                />
              </Stack>
            </Alert>
          )}
        </Stack>
      ),
    };
  }

  const existing = new Map((listing.data?.databases ?? []).map((entry) => [entry.name, entry.sizeBytes]));
  // The default is a database that does not exist yet: `_2`, `_3`... when today's name is taken already.
  const freshName = (original: string) => {
    const base = defaultRestoreName(original);
    let candidate = base;
    for (let n = 2; existing.has(candidate); n++) candidate = `${base}_${n}`;
    return candidate;
  };
  const names = Object.fromEntries(originals.map((name) => [name, edited[name] ?? freshName(name)]));
  // An empty field means the original name (the API's rule): that is what is compared with what exists.
  const planned = originals.map((original) => ({ original, target: (names[original] ?? '').trim() || original }));
  const clashes = [...new Set(planned.map((entry) => entry.target).filter((target) => existing.has(target)))];
  const confirmed = clashes.every((name) => (confirmations[name] ?? '') === name);
  const ready = Boolean(sourceId) && listing.isSuccess && confirmed;
  const mapping = Object.fromEntries(planned.filter((entry) => (names[entry.original] ?? '').trim() !== '').map((entry) => [entry.original, entry.target]));
  const targetBody =
    originals.length <= 1
      ? (names[originals[0] ?? ''] ?? '').trim()
        ? { database: (names[originals[0]!] ?? '').trim() }
        : {}
      : Object.keys(mapping).length > 0
        ? { databaseMapping: mapping }
        : {};
  return {
    body: ready ? { targetSourceId: sourceId, ...targetBody, ...(clashes.length > 0 ? { overwrite: true } : {}) } : null,
    refusedNonEmpty: () => undefined,
    fields: (
      <Stack gap="xs">
        {sourceSelect}
        {sourceId && listing.isPending && (
          <Group gap="xs">
            <Loader size="xs" />
            <Text size="sm">Connecting to the source…</Text>
          </Group>
        )}
        {listing.isError && (
          <Alert color="red" title="The source cannot be reached" role="alert" data-testid="restore-connection-error">
            {errorMessage(listing.error)} The restore cannot start until the source answers.
          </Alert>
        )}
        {listing.isSuccess && (
          <div>
            <Text size="sm" fw={500} id="restore-existing-databases">
              Databases on this source now
            </Text>
            <Table aria-labelledby="restore-existing-databases" data-testid="restore-existing-databases" withTableBorder>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Name</Table.Th>
                  <Table.Th>Size</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {listing.data.databases.length === 0 && (
                  <Table.Tr>
                    <Table.Td colSpan={2}>None</Table.Td>
                  </Table.Tr>
                )}
                {listing.data.databases.map((entry) => (
                  <Table.Tr key={entry.name} data-database={entry.name}>
                    <Table.Td>{entry.name}</Table.Td>
                    <Table.Td>{formatBytes(entry.sizeBytes)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </div>
        )}
        {originals.map((original) => (
          <TextInput
            key={original}
            label={originals.length > 1 ? `Target database for ${original}` : 'Target database'}
            description={`Default: a new database. Empty: the original name (${original}), which replaces that database if it exists.`}
            value={names[original] ?? ''}
            onChange={(event) => {
              const value = event.currentTarget.value;
              setNames((current) => ({ ...current, [original]: value }));
            }}
            data-field={originals.length > 1 ? `restore-database-${original}` : 'restore-database'}
          />
        ))}
        {listing.isSuccess &&
          clashes.map((name) => (
            <Alert key={name} color="red" title={`"${name}" already exists and will be replaced`} data-testid="restore-overwrite-warning">
              <Stack gap="xs">
                <Text size="sm">
                  The database &quot;{name}&quot; ({formatBytes(existing.get(name))}) is dropped and replaced by the backup: its current tables and rows,
                  including anything written since the backup, are lost. Choose another name to keep it.
                </Text>
                <TextInput
                  label={`Type ${name} to confirm`}
                  value={confirmations[name] ?? ''}
                  onChange={(event) => {
                    const value = event.currentTarget.value;
                    setConfirmations((current) => ({ ...current, [name]: value }));
                  }}
                  autoComplete="off"
                  data-field="restore-confirm"
                />
              </Stack>
            </Alert>
          ))}
      </Stack>
    ),
  };
}
