import { ActionIcon, Button, Checkbox, Group, NumberInput, Paper, Select, Stack, Switch, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { z } from 'zod';
import { useAdapters, useAdapterTypes } from '../api/adapters';
import { api, unwrap } from '../api/client';
import { withStepUp } from '../security/StepUp';
import { ErrorAlert, QueryState } from '../components/PageState';
import { ArchiveFormatFields } from '../configuration/ArchiveFormatFields';
import { DatabasePicker } from '../configuration/DatabasePicker';
import { archiveCapabilitiesOf, fitArchiveOptions, FULL_EVERY_DAYS, FULL_EVERY_RUNS } from '../configuration/archive-options';
import { NextRunsPreview } from '../configuration/NextRunsPreview';
import { RetentionPreview } from '../configuration/RetentionPreview';
import { TestRestoreFields, type TestRestore } from '../configuration/TestRestoreFields';
import { useUnsavedChangesGuard } from '../configuration/unsaved-changes';
import { useRunJob } from './JobsPage';
import { PointInTimePanel } from '../pitr/PointInTimePanel';
import { serverChoicesOf } from '../pitr/mysql-restore-request';

type Transfer = 'relay' | 'direct';
const TRANSFER_CHOICES: Array<{ value: Transfer; label: string }> = [
  { value: 'relay', label: 'Relay through this server' },
  { value: 'direct', label: 'Direct from the agent' },
];

/** Built-in schedule choices; a custom 5-part cron expression is always possible. */
const SCHEDULE_PRESETS = [
  { value: '0 * * * *', label: 'Every hour' },
  { value: '0 3 * * *', label: 'Daily at 03:00' },
  { value: '0 3 * * 0', label: 'Weekly (Sunday 03:00)' },
  { value: '0 3 1 * *', label: 'Monthly (1st, 03:00)' },
];

const COMPRESSIONS = ['NONE', 'GZIP', 'BROTLI', 'ZSTD'] as const;

/** Level ranges and defaults of docs/formats/compression.md; the server validates them too. */
const LEVELS: Partial<Record<'NONE' | 'GZIP' | 'BROTLI' | 'ZSTD', { min: number; max: number; fallback: number }>> = {
  GZIP: { min: 1, max: 9, fallback: 3 },
  BROTLI: { min: 0, max: 11, fallback: 3 },
  ZSTD: { min: 1, max: 19, fallback: 3 },
};

const CRON = /^(\S+\s+){4}\S+$/;

function rangeOrNull(range: { min: number; max: number }, unit: string) {
  const message = `Use ${range.min} to ${range.max} ${unit}, or leave it empty`;
  return z.number().int(message).min(range.min, message).max(range.max, message).nullable();
}

const jobSchema = z.object({
  name: z.string().trim().min(1, 'Enter a name'),
  sourceId: z.string().min(1, 'Choose a source'),
  schedule: z.string().trim().regex(CRON, 'Use a 5-part cron expression, e.g. 0 3 * * *'),
  /** A stored schedule preset the job follows (its cron then overrides `schedule`, SPEC "Job"); null: own cron. */
  schedulePresetId: z.string().nullable(),
  skipVerification: z.boolean(),
  destinations: z.array(z.string()).min(1, 'Add at least one destination'),
  databases: z.array(z.string()),
  compression: z.enum(COMPRESSIONS),
  /** Null: the codec's default level / the engine's default thread count (docs/formats/compression.md). */
  compressionLevel: z.number().int().nullable(),
  compressionThreads: z.number().int().nullable(),
  archiveFormat: z.enum(['PLAIN', 'SEEKABLE']),
  /** Null (both): every run is a full backup; the server checks the source can keep a chain at all. */
  fullEveryRuns: rangeOrNull(FULL_EVERY_RUNS, 'runs'),
  fullEveryDays: rangeOrNull(FULL_EVERY_DAYS, 'days'),
  encryptionProfileId: z.string().nullable(),
  namingTemplateId: z.string().nullable(),
  notificationTemplateId: z.string().nullable(),
  enabled: z.boolean(),
  /** Scheduled test restores (issue 19); the server checks the target against the source. */
  testRestore: z.custom<TestRestore | null>(),
});

type JobForm = z.infer<typeof jobSchema>;

// New jobs start on ZSTD (level 3, threads auto): measured about 3x faster than GZIP on PostgreSQL and 5x on
// directories, with an output no larger (docs/benchmarks.md, issue 21). The API's own default stays NONE (SPEC.md).
const EMPTY: JobForm = { name: '', sourceId: '', schedule: '0 3 * * *', schedulePresetId: null, skipVerification: false, destinations: [], databases: [], compression: 'ZSTD', compressionLevel: null, compressionThreads: null, archiveFormat: 'PLAIN', fullEveryRuns: null, fullEveryDays: null, encryptionProfileId: null, namingTemplateId: null, notificationTemplateId: null, enabled: true, testRestore: null };

/** A physical-mode PostgreSQL source's `walFlushIntervalSeconds` (the panel's recovery point threshold), when set. */
function walFlushIntervalOf(source: { config?: unknown } | undefined): number | undefined {
  const config = source?.config as Record<string, unknown> | undefined;
  // PostgreSQL's WAL and MySQL's binary log are flushed on their own settings.
  const value = config?.walFlushIntervalSeconds ?? config?.binlogFlushIntervalSeconds;
  return typeof value === 'number' ? value : undefined;
}

export default function JobEditPage() {
  const { id } = useParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const sources = useAdapters('database');
  const storages = useAdapters('storage');
  const adapterTypes = useAdapterTypes();
  const vault = useQuery({ queryKey: ['vault'], queryFn: () => unwrap(api.GET('/api/vault')) });
  const policies = useQuery({ queryKey: ['retention-policies'], queryFn: () => unwrap(api.GET('/api/retention-policies')) });
  const presets = useQuery({ queryKey: ['schedule-presets'], queryFn: () => unwrap(api.GET('/api/schedule-presets')) });
  const namingTemplates = useQuery({ queryKey: ['naming-templates'], queryFn: () => unwrap(api.GET('/api/naming-templates')) });
  const notificationTemplates = useQuery({ queryKey: ['notification-templates'], queryFn: () => unwrap(api.GET('/api/notification-templates')) });
  const existing = useQuery({ queryKey: ['jobs', id], queryFn: () => unwrap(api.GET('/api/jobs/{id}', { params: { path: { id: id! } } })), enabled: Boolean(id) });
  const [form, setForm] = useState<JobForm>(EMPTY);
  /** The form as loaded (or empty for a new job): what leaving the page would lose is the difference. */
  const [loaded, setLoaded] = useState<JobForm>(EMPTY);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [lock, setLock] = useState(false);
  /** Retention policy per destination (configId -> policy id; none: the destination's default applies). */
  const [retention, setRetention] = useState<Record<string, string | null>>({});
  const [loadedRetention, setLoadedRetention] = useState<Record<string, string | null>>({});
  /** How each destination gets the backup of a source on a remote agent (configId -> relay | direct; none: relay). */
  const [transfers, setTransfers] = useState<Record<string, Transfer>>({});
  const [loadedTransfers, setLoadedTransfers] = useState<Record<string, Transfer>>({});
  const run = useRunJob();
  const isDirty = JSON.stringify([form, retention, transfers]) !== JSON.stringify([loaded, loadedRetention, loadedTransfers]);
  const releaseGuard = useUnsavedChangesGuard(isDirty);

  useEffect(() => {
    const job = existing.data;
    if (!job) return;
    const next: JobForm = {
      name: job.name,
      sourceId: job.sourceId,
      schedule: job.schedule,
      schedulePresetId: job.schedulePresetId,
      skipVerification: job.skipVerification,
      destinations: [...job.destinations].sort((a, b) => a.priority - b.priority).map((destination) => destination.configId),
      databases: job.databases,
      compression: job.compression,
      compressionLevel: job.compressionLevel,
      compressionThreads: job.compressionThreads,
      archiveFormat: job.archiveFormat,
      fullEveryRuns: job.fullEveryRuns,
      fullEveryDays: job.fullEveryDays,
      encryptionProfileId: job.encryptionProfileId,
      namingTemplateId: job.namingTemplateId,
      notificationTemplateId: job.notificationTemplateId,
      enabled: job.enabled,
      testRestore: job.testRestore,
    };
    setForm(next);
    setLoaded(next);
    const policies = Object.fromEntries(job.destinations.map((destination) => [destination.configId, destination.retentionPolicyId]));
    setRetention(policies);
    setLoadedRetention(policies);
    const chosen = Object.fromEntries(job.destinations.map((destination) => [destination.configId, destination.transfer ?? 'relay'])) as Record<string, Transfer>;
    setTransfers(chosen);
    setLoadedTransfers(chosen);
  }, [existing.data]);

  const save = useMutation({
    mutationFn: (valid: JobForm) => {
      const body = { ...valid, destinations: valid.destinations.map((configId, priority) => ({ configId, priority, retentionPolicyId: retention[configId] ?? null, transfer: transfers[configId] ?? 'relay' })) };
      // A change of a destination's retention needs a fresh second factor (issue 45.4): asked for when the server says so.
      return id ? withStepUp(() => unwrap(api.PUT('/api/jobs/{id}', { params: { path: { id } }, body }))) : unwrap(api.POST('/api/jobs', { body }));
    },
    onSuccess: async (job) => {
      await queryClient.invalidateQueries({ queryKey: ['jobs'] });
      notifications.show({ color: 'green', message: `Saved ${job.name}` });
      releaseGuard();
      navigate('/jobs');
    },
  });
  const clone = useMutation({
    mutationFn: () => unwrap(api.POST('/api/jobs/{id}/clone', { params: { path: { id: id! } }, body: {} })),
    onSuccess: async (job) => {
      await queryClient.invalidateQueries({ queryKey: ['jobs'] });
      releaseGuard();
      navigate(`/jobs/${job.id}`);
    },
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/jobs/{id}', { params: { path: { id: id! } } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['jobs'] });
      releaseGuard();
      navigate('/jobs');
    },
  });

  // A field's error goes as soon as the field is fixed; new errors wait for the next Save (no red while typing).
  useEffect(() => {
    setErrors((shown) => {
      if (Object.keys(shown).length === 0) return shown;
      const parsed = jobSchema.safeParse(form);
      const now = parsed.success ? {} : Object.fromEntries(parsed.error.issues.map((issue) => [String(issue.path[0]), issue.message]));
      const kept = Object.fromEntries(Object.entries(shown).filter(([field]) => field in now).map(([field]) => [field, now[field]!]));
      return Object.keys(kept).length === Object.keys(shown).length ? shown : kept;
    });
  }, [form]);

  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    const parsed = jobSchema.safeParse(form);
    if (!parsed.success) {
      setErrors(Object.fromEntries(parsed.error.issues.map((issue) => [String(issue.path[0]), issue.message])));
      return;
    }
    setErrors({});
    save.mutate(parsed.data);
  };

  const capabilitiesOf = (sourceId: string) => archiveCapabilitiesOf(adapterTypes.data, sources.data?.find((source) => source.id === sourceId)?.adapterId);
  const capabilities = capabilitiesOf(form.sourceId);
  const sourceAdapterId = sources.data?.find((source) => source.id === form.sourceId)?.adapterId;
  const canListDatabases = adapterTypes.data?.find((type) => type.type === 'database' && type.adapterId === sourceAdapterId)?.capabilities?.listDatabases === true;
  // Per-member compression of a seekable archive has no BROTLI; the option is off, and a job that had it says why.
  const isBrotliRefused = form.archiveFormat === 'SEEKABLE';
  const storageName = (configId: string) => storages.data?.find((storage) => storage.id === configId)?.name ?? configId;
  const storageAdapterOf = (configId: string) => storages.data?.find((storage) => storage.id === configId)?.adapterId;
  const isServerDiskOnly = (configId: string) =>
    adapterTypes.data?.find((type) => type.type === 'storage' && type.adapterId === storageAdapterOf(configId))?.capabilities?.serverDiskOnly === true;
  // Direct uploads exist only for a source on a remote agent (docs/agents.md "Direct uploads"); a folder on the
  // server's disk (its adapter declares `serverDiskOnly`) is never a direct destination, so neither shows the choice.
  const sourceAgentId = sources.data?.find((source) => source.id === form.sourceId)?.agentId ?? null;
  const move = (index: number, delta: number) => {
    const next = [...form.destinations];
    const [item] = next.splice(index, 1);
    next.splice(index + delta, 0, item!);
    setForm({ ...form, destinations: next });
  };
  const addable = (storages.data ?? []).filter((storage) => !form.destinations.includes(storage.id)).map((storage) => ({ value: storage.id, label: storage.name }));
  // Built-in choices only fill the cron field; a stored preset is linked (value `preset:<id>`), so editing the preset
  // later moves every job that follows it.
  const storedPresets = presets.data ?? [];
  const scheduleChoices = [
    { group: 'Stored presets (linked)', items: storedPresets.map((preset) => ({ value: `preset:${preset.id}`, label: `${preset.name} (${preset.schedule})` })) },
    { group: 'Fill in a cron', items: SCHEDULE_PRESETS },
  ].filter((group) => group.items.length > 0);
  const linked = storedPresets.find((preset) => preset.id === form.schedulePresetId);
  const scheduleChoice = linked ? `preset:${linked.id}` : SCHEDULE_PRESETS.some((choice) => choice.value === form.schedule) ? form.schedule : null;
  const chooseSchedule = (value: string | null) => {
    if (!value) return setForm({ ...form, schedulePresetId: null });
    const preset = value.startsWith('preset:') ? storedPresets.find((entry) => `preset:${entry.id}` === value) : undefined;
    setForm(preset ? { ...form, schedulePresetId: preset.id, schedule: preset.schedule } : { ...form, schedulePresetId: null, schedule: value });
  };

  return (
    <Stack maw={720}>
      <Title order={2}>{id ? `Job: ${existing.data?.name ?? ''}` : 'New job'}</Title>
      <QueryState isPending={sources.isPending || storages.isPending || (Boolean(id) && existing.isPending)} error={sources.error ?? storages.error ?? existing.error}>
        {id && (
          <Paper withBorder p="md">
            <Group>
              <Button onClick={() => run.mutate({ jobId: id, lock })} loading={run.isPending} data-testid="run-now">
                Run now
              </Button>
              <Checkbox label="Lock this backup (keep it out of retention)" checked={lock} onChange={(event) => setLock(event.currentTarget.checked)} />
              <Button variant="default" onClick={() => clone.mutate()} loading={clone.isPending}>
                Clone
              </Button>
            </Group>
            {clone.error && <ErrorAlert error={clone.error} />}
          </Paper>
        )}
        {id && <PointInTimePanel jobId={id} encryptionProfileId={loaded.encryptionProfileId} flushIntervalSeconds={walFlushIntervalOf(sources.data?.find((source) => source.id === loaded.sourceId))} databases={loaded.databases} servers={serverChoicesOf(sources.data ?? [], loaded.sourceId)} />}
        <Paper withBorder p="md">
          <form onSubmit={submit} noValidate>
            <Stack>
              <TextInput label="Name" required value={form.name} error={errors.name} onChange={(event) => setForm({ ...form, name: event.currentTarget.value })} data-field="job-name" />
              <Select
                label="Source"
                required
                data={(sources.data ?? []).map((source) => ({ value: source.id, label: source.name }))}
                value={form.sourceId || null}
                error={errors.sourceId}
                onChange={(value) => setForm({ ...form, sourceId: value ?? '', ...fitArchiveOptions(form, capabilitiesOf(value ?? '')) })}
                data-field="job-source"
                placeholder="Choose a source"
              />
              <DatabasePicker sourceId={form.sourceId} canList={canListDatabases} value={form.databases} onChange={(databases) => setForm({ ...form, databases })} />
              <div>
                <Text fw={500} size="sm">
                  Destinations (uploaded in this order)
                </Text>
                {form.destinations.length === 0 && (
                  <Text size="sm" c="dimmed">
                    None yet.
                  </Text>
                )}
                <Stack gap={4} my="xs">
                  {form.destinations.map((configId, index) => (
                    <Group key={configId} justify="space-between" wrap="wrap" gap="xs">
                      <Text size="sm">
                        {index + 1}. {storageName(configId)}
                      </Text>
                      <Group gap={4} wrap="nowrap">
                        {sourceAgentId && !isServerDiskOnly(configId) && (
                          <Select
                            aria-label={`Transfer for ${storageName(configId)}`}
                            size="xs"
                            w={190}
                            data={TRANSFER_CHOICES}
                            value={transfers[configId] ?? 'relay'}
                            onChange={(value) => setTransfers({ ...transfers, [configId]: (value as Transfer | null) ?? 'relay' })}
                            allowDeselect={false}
                            data-field={`transfer-${configId}`}
                          />
                        )}
                        <Select
                          aria-label={`Retention policy for ${storageName(configId)}`}
                          size="xs"
                          w={170}
                          data={(policies.data ?? []).map((policy) => ({ value: policy.id, label: policy.name }))}
                          value={retention[configId] ?? null}
                          onChange={(value) => setRetention({ ...retention, [configId]: value })}
                          placeholder="Default retention"
                          clearable
                        />
                        <ActionIcon variant="default" aria-label={`Move ${storageName(configId)} up`} disabled={index === 0} onClick={() => move(index, -1)}>
                          <span aria-hidden="true">↑</span>
                        </ActionIcon>
                        <ActionIcon variant="default" aria-label={`Move ${storageName(configId)} down`} disabled={index === form.destinations.length - 1} onClick={() => move(index, 1)}>
                          <span aria-hidden="true">↓</span>
                        </ActionIcon>
                        <ActionIcon variant="default" aria-label={`Remove ${storageName(configId)}`} onClick={() => setForm({ ...form, destinations: form.destinations.filter((entry) => entry !== configId) })}>
                          <span aria-hidden="true">×</span>
                        </ActionIcon>
                      </Group>
                    </Group>
                  ))}
                </Stack>
                <Select
                  aria-label="Add a destination"
                  placeholder="Add a destination"
                  data={addable}
                  value={null}
                  error={errors.destinations}
                  onChange={(value) => value && setForm({ ...form, destinations: [...form.destinations, value] })}
                  data-field="job-add-destination"
                />
              </div>
              <Select
                label="Schedule preset"
                description={linked ? `Follows the preset "${linked.name}": changing the preset changes this job's schedule` : undefined}
                data={scheduleChoices}
                value={scheduleChoice}
                onChange={chooseSchedule}
                placeholder="Custom"
                clearable
                data-field="job-schedule-preset"
              />
              <TextInput
                label="Schedule (cron)"
                description="Minute hour day-of-month month day-of-week, in the system timezone"
                value={form.schedule}
                error={errors.schedule}
                onChange={(event) => setForm({ ...form, schedule: event.currentTarget.value, schedulePresetId: null })}
                data-field="job-schedule"
              />
              <NextRunsPreview schedule={form.schedule} />
              <ArchiveFormatFields value={form} capabilities={capabilities} errors={errors} onChange={(archive) => setForm({ ...form, ...archive })} />
              <Select
                label="Compression"
                data={COMPRESSIONS.map((codec) => ({ value: codec, label: codec, disabled: codec === 'BROTLI' && isBrotliRefused }))}
                value={form.compression}
                error={form.compression === 'BROTLI' && isBrotliRefused ? 'A seekable archive compresses each member with GZIP or ZSTD (or NONE), not BROTLI' : undefined}
                // A level or thread count only means something for the codec it was chosen for.
                onChange={(value) => setForm({ ...form, compression: (value ?? 'NONE') as JobForm['compression'], compressionLevel: null, compressionThreads: null })}
                allowDeselect={false}
                data-field="job-compression"
              />
              {form.compression in LEVELS && (
                <Group grow align="flex-start">
                  <NumberInput
                    label="Compression level"
                    description={`${LEVELS[form.compression]!.min} to ${LEVELS[form.compression]!.max}; empty: ${LEVELS[form.compression]!.fallback}`}
                    min={LEVELS[form.compression]!.min}
                    max={LEVELS[form.compression]!.max}
                    value={form.compressionLevel ?? ''}
                    onChange={(value) => setForm({ ...form, compressionLevel: typeof value === 'number' ? value : null })}
                    data-field="job-compression-level"
                  />
                  {form.compression === 'ZSTD' && (
                    <NumberInput
                      label="Worker threads"
                      description="1 to 16; empty: the number of cores, at most 3 (the server's thread pool size minus one)"
                      min={1}
                      max={16}
                      value={form.compressionThreads ?? ''}
                      onChange={(value) => setForm({ ...form, compressionThreads: typeof value === 'number' ? value : null })}
                      data-field="job-compression-threads"
                    />
                  )}
                </Group>
              )}
              <Select
                label="Encryption profile"
                data={(vault.data ?? []).map((profile) => ({ value: profile.id, label: profile.name }))}
                value={form.encryptionProfileId}
                onChange={(value) => setForm({ ...form, encryptionProfileId: value })}
                placeholder="No encryption"
                clearable
              />
              <Select
                label="Naming template"
                data={(namingTemplates.data ?? []).map((template) => ({ value: template.id, label: `${template.name} (${template.pattern})` }))}
                value={form.namingTemplateId}
                onChange={(value) => setForm({ ...form, namingTemplateId: value })}
                placeholder="Default template"
                clearable
                data-field="job-naming-template"
              />
              <Select
                label="Notification template"
                data={(notificationTemplates.data ?? []).map((template) => ({ value: template.id, label: template.name }))}
                value={form.notificationTemplateId}
                onChange={(value) => setForm({ ...form, notificationTemplateId: value })}
                placeholder="Default template"
                clearable
                data-field="job-notification-template"
              />
              <Switch
                label="Skip the read-back check after upload"
                description="Off (recommended): each destination's copy is read back and compared with the backup's checksum; a mismatch makes the run Partial"
                checked={form.skipVerification}
                onChange={(event) => setForm({ ...form, skipVerification: event.currentTarget.checked })}
                data-field="job-skip-verification"
              />
              <Switch label="Scheduled runs enabled" checked={form.enabled} onChange={(event) => setForm({ ...form, enabled: event.currentTarget.checked })} />
              <TestRestoreFields value={form.testRestore} sources={sources.data ?? []} onChange={(testRestore) => setForm({ ...form, testRestore })} />
              {save.error && <ErrorAlert error={save.error} title="Could not save the job" />}
              {remove.error && <ErrorAlert error={remove.error} title="Could not delete the job" />}
              <Group>
                <Button type="submit" loading={save.isPending}>
                  Save job
                </Button>
                {id && (
                  <Button color="red" variant="outline" onClick={() => window.confirm('Delete this job?') && remove.mutate()} loading={remove.isPending}>
                    Delete
                  </Button>
                )}
              </Group>
            </Stack>
          </form>
        </Paper>
        {id && <RetentionPreview jobId={id} />}
      </QueryState>
    </Stack>
  );
}
