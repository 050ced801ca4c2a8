import { Alert, Button, Group, Paper, Select, Stack, Switch, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { ADAPTER_KINDS, useAdapterTypes, type AdapterType } from '../api/adapters';
import { api, errorMessage, unwrap } from '../api/client';
import { withStepUp } from '../security/StepUp';
import { RunOnField } from '../agents/RunOnField';
import { ErrorAlert, QueryState } from '../components/PageState';
import { initialValues, issuesByField, pruneEmpty, validatorFor, type FormValues, type JsonSchema } from '../schema-form/json-schema';
import { SchemaForm } from '../schema-form/SchemaForm';

/** Create or edit a source, destination or channel; the config form is drawn from the adapter's JSON Schema. */
export default function AdapterEditPage() {
  const { id, type: typeParam } = useParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const types = useAdapterTypes();
  const existing = useQuery({ queryKey: ['adapters', 'one', id], queryFn: () => unwrap(api.GET('/api/adapters/{id}', { params: { path: { id: id! } } })), enabled: Boolean(id) });
  const type = (existing.data?.type ?? typeParam ?? 'database') as AdapterType;
  const kind = ADAPTER_KINDS[type];

  const [adapterId, setAdapterId] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [excludeFromRestore, setExcludeFromRestore] = useState(false);
  /** Sources only: the remote agent that runs it (issue 48); null runs it on this server. */
  const [agentId, setAgentId] = useState<string | null>(null);
  const [values, setValues] = useState<FormValues>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [testResult, setTestResult] = useState<{ success: boolean; message: string } | null>(null);

  const adapterType = types.data?.find((entry) => entry.adapterId === (existing.data?.adapterId ?? adapterId) && entry.type === type);
  const schema = adapterType?.configSchema as JsonSchema | undefined;
  const storedSecrets = useMemo(
    () => new Set(Object.entries(existing.data?.secretStatus ?? {}).filter(([, stored]) => stored).map(([field]) => field)),
    [existing.data],
  );

  useEffect(() => {
    if (!existing.data) return;
    setName(existing.data.name);
    setAdapterId(existing.data.adapterId);
    setExcludeFromRestore(existing.data.excludeFromRestore);
    setAgentId(existing.data.agentId ?? null);
  }, [existing.data]);
  useEffect(() => {
    if (schema) setValues(initialValues(schema, existing.data?.config as FormValues | undefined));
    setErrors({});
    setTestResult(null);
  }, [schema, existing.data]);

  /** Validates with zod from the JSON Schema; returns the config to send, or undefined (errors shown). */
  const validConfig = (): FormValues | undefined => {
    if (!schema) return undefined;
    const config = pruneEmpty(values);
    const result = validatorFor(schema, storedSecrets).safeParse(config);
    const nameError: Record<string, string> = name.trim() ? {} : { name: 'Enter a name' };
    if (!result.success || !name.trim()) {
      setErrors({ ...(result.success ? {} : issuesByField(result.error)), ...nameError });
      return undefined;
    }
    setErrors({});
    return config;
  };

  const save = useMutation({
    mutationFn: async (config: FormValues) => {
      // A destination's lock settings changing need a fresh second factor (issue 45.4): asked for when the server says so.
      const placement = type === 'database' ? { agentId } : {};
      if (id) return withStepUp(() => unwrap(api.PUT('/api/adapters/{id}', { params: { path: { id } }, body: { name: name.trim(), config, excludeFromRestore, ...placement } })));
      return unwrap(api.POST('/api/adapters', { body: { type, adapterId: adapterId!, name: name.trim(), config, excludeFromRestore, ...placement } }));
    },
    onSuccess: async (saved) => {
      // Checked once on save, so the list shows whether it works now instead of ONLINE until the first scheduled
      // health check (issue 47). A failing check does not undo the save: the list shows it OFFLINE with the reason.
      const check = await unwrap(api.POST('/api/adapters/test-connection', { body: { id: saved.id } })).catch((error: unknown) => ({ success: false, message: errorMessage(error) }));
      await queryClient.invalidateQueries({ queryKey: ['adapters'] });
      notifications.show({ color: check.success ? 'green' : 'orange', message: check.success ? `Saved ${saved.name}; the connection works` : `Saved ${saved.name}, but the connection check failed: ${check.message}` });
      navigate(`/${kind.path}`);
    },
  });
  const test = useMutation({
    mutationFn: (config: FormValues) =>
      // A source is tested where it will run: through the chosen agent, or from this server.
      unwrap(api.POST('/api/adapters/test-connection', { body: { ...(id ? { id } : {}), type, adapterId: adapterId!, config, ...(type === 'database' ? { agentId } : {}) } })),
    onMutate: () => setTestResult(null),
    onSuccess: (result) => setTestResult(result),
    onError: (error) => setTestResult({ success: false, message: errorMessage(error) }),
  });
  const remove = useMutation({
    mutationFn: () => withStepUp(() => unwrap(api.DELETE('/api/adapters/{id}', { params: { path: { id: id! } } }))),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['adapters'] });
      navigate(`/${kind.path}`);
    },
  });

  const choices = (types.data ?? []).filter((entry) => entry.type === type).map((entry) => ({ value: entry.adapterId, label: entry.displayName }));
  return (
    <Stack maw={720}>
      <Title order={2}>{id ? `Edit ${existing.data?.name ?? kind.singular}` : `New ${kind.singular}`}</Title>
      <QueryState isPending={types.isPending || (Boolean(id) && existing.isPending)} error={types.error ?? existing.error}>
        <Paper withBorder p="md">
          <form
            noValidate
            onSubmit={(event) => {
              event.preventDefault();
              const config = validConfig();
              if (config) save.mutate(config);
            }}
          >
            <Stack>
              <Select
                label="Kind"
                data={choices}
                value={adapterId}
                onChange={setAdapterId}
                disabled={Boolean(id)}
                searchable
                required
                data-field="adapterId"
                placeholder="Choose a kind"
              />
              {adapterType?.description && (
                <Text size="sm" c="dimmed">
                  {adapterType.description}
                </Text>
              )}
              <TextInput label="Name" required value={name} error={errors.name} onChange={(event) => setName(event.currentTarget.value)} data-field="name" />
              {type === 'database' && <RunOnField agentId={agentId} onChange={setAgentId} />}
              {type === 'database' && (
                <Switch
                  label="Exclude from restore targets"
                  checked={excludeFromRestore}
                  onChange={(event) => setExcludeFromRestore(event.currentTarget.checked)}
                />
              )}
              {schema && <SchemaForm schema={schema} values={values} onChange={setValues} errors={errors} storedSecrets={storedSecrets} />}
              {errors._ && <Alert color="red">{errors._}</Alert>}
              {save.error && <ErrorAlert error={save.error} title="Could not save" />}
              {remove.error && <ErrorAlert error={remove.error} title="Could not delete" />}
              {testResult && (
                <Alert color={testResult.success ? 'green' : 'red'} title={testResult.success ? 'Connection works' : 'Connection failed'} data-testid="test-result">
                  {testResult.message}
                </Alert>
              )}
              <Group>
                <Button type="submit" loading={save.isPending} disabled={!schema}>
                  Save
                </Button>
                <Button
                  variant="default"
                  loading={test.isPending}
                  disabled={!schema}
                  onClick={() => {
                    const config = validConfig();
                    if (config) test.mutate(config);
                  }}
                >
                  Test connection
                </Button>
                {id && (
                  <Button color="red" variant="outline" loading={remove.isPending} onClick={() => window.confirm(`Delete ${name}?`) && remove.mutate()}>
                    Delete
                  </Button>
                )}
              </Group>
            </Stack>
          </form>
        </Paper>
      </QueryState>
    </Stack>
  );
}
