import { Anchor, Button, Checkbox, Group, NumberInput, Paper, SimpleGrid, Stack, Switch, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { ErrorAlert, QueryState } from '../components/PageState';
import { NUMBER_SETTING_GROUPS, type NumberSetting } from '../configuration/system-settings-fields';
import { SystemTasks } from '../configuration/SystemTasks';

type Form = Record<NumberSetting['key'], number> & { systemTimezone: string; recordTriggerActor: boolean; stuckJobTimeoutMinutes: number | null };

/**
 * Every system setting of SPEC "SystemSetting" (issue 47: rate limits, the stuck-job timeout, concurrent files and
 * the privacy toggle had no field), and the system tasks with their schedules.
 */
export default function SettingsPage() {
  const auth = useAuth();
  const canWrite = auth.can('settings:write');
  const queryClient = useQueryClient();
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => unwrap(api.GET('/api/settings')) });
  const [form, setForm] = useState<Form | undefined>();
  useEffect(() => {
    if (!settings.data) return;
    const numbers = Object.fromEntries(NUMBER_SETTING_GROUPS.flatMap((group) => group.fields).map((field) => [field.key, settings.data[field.key]])) as Record<NumberSetting['key'], number>;
    setForm({ ...numbers, systemTimezone: settings.data.systemTimezone, recordTriggerActor: settings.data['privacy.recordTriggerActor'], stuckJobTimeoutMinutes: settings.data.stuckJobTimeoutMinutes });
  }, [settings.data]);
  const save = useMutation({
    mutationFn: (values: Form) => {
      const { recordTriggerActor, ...rest } = values;
      return unwrap(api.PUT('/api/settings', { body: { ...rest, 'privacy.recordTriggerActor': recordTriggerActor } }));
    },
    onSuccess: async () => {
      notifications.show({ color: 'green', message: 'Settings saved', closeButtonProps: { 'aria-label': 'Dismiss' } });
      await queryClient.invalidateQueries({ queryKey: ['settings'] });
    },
  });
  const set = (patch: Partial<Form>) => setForm((current) => (current ? { ...current, ...patch } : current));
  const isStuckTimeoutOff = form?.stuckJobTimeoutMinutes === null;
  return (
    <Stack maw={900}>
      <Title order={2}>Settings</Title>
      <Text size="sm">
        Sign-in through an identity provider: <Anchor component={Link} to="/settings/sso" underline="always">single sign-on providers (OIDC, SAML)</Anchor>. Events outside jobs: <Anchor component={Link} to="/settings/notifications" underline="always">system notifications</Anchor>.
      </Text>
      <QueryState isPending={settings.isPending || !form} error={settings.error}>
        {form && (
          <Paper withBorder p="md">
            <form
              onSubmit={(event) => {
                event.preventDefault();
                save.mutate(form);
              }}
            >
              <fieldset disabled={!canWrite} style={{ border: 0, padding: 0, margin: 0 }}>
                <Stack>
                  {NUMBER_SETTING_GROUPS.map((group) => (
                    <Stack key={group.title} gap="xs">
                      <Title order={3} size="h5">
                        {group.title}
                      </Title>
                      <SimpleGrid cols={{ base: 1, sm: 2 }}>
                        {group.fields.map((field) => (
                          <NumberInput
                            key={field.key}
                            label={field.label}
                            description={field.description}
                            min={field.min}
                            max={field.max}
                            allowDecimal={false}
                            value={form[field.key]}
                            onChange={(value) => set({ [field.key]: Number(value) || field.min } as Partial<Form>)}
                            data-setting={field.key}
                          />
                        ))}
                      </SimpleGrid>
                    </Stack>
                  ))}
                  <Title order={3} size="h5">
                    Stuck runs, time and privacy
                  </Title>
                  <SimpleGrid cols={{ base: 1, sm: 2 }}>
                    <Stack gap={4}>
                      <NumberInput
                        label="Stuck-job timeout (minutes)"
                        description="A run without progress this long is cancelled"
                        min={1}
                        max={10_080}
                        allowDecimal={false}
                        disabled={isStuckTimeoutOff}
                        value={form.stuckJobTimeoutMinutes ?? ''}
                        onChange={(value) => set({ stuckJobTimeoutMinutes: Number(value) || 1 })}
                        data-setting="stuckJobTimeoutMinutes"
                      />
                      <Checkbox label="Never cancel stuck runs" checked={isStuckTimeoutOff} onChange={(event) => set({ stuckJobTimeoutMinutes: event.currentTarget.checked ? null : 360 })} data-setting="stuckJobTimeoutNever" />
                    </Stack>
                    <TextInput label="System timezone" description="IANA name, e.g. Europe/Berlin" value={form.systemTimezone} onChange={(event) => set({ systemTimezone: event.currentTarget.value })} data-setting="systemTimezone" />
                  </SimpleGrid>
                  <Switch
                    label="Record who started a run in the backup's metadata"
                    description="Off: the user or API key name is left out of the metadata file beside each backup"
                    checked={form.recordTriggerActor}
                    onChange={(event) => set({ recordTriggerActor: event.currentTarget.checked })}
                    data-setting="privacy.recordTriggerActor"
                  />
                  {save.error && <ErrorAlert error={save.error} title="Could not save" />}
                  {canWrite && (
                    <Group>
                      <Button type="submit" loading={save.isPending}>
                        Save settings
                      </Button>
                    </Group>
                  )}
                </Stack>
              </fieldset>
            </form>
          </Paper>
        )}
      </QueryState>
      <SystemTasks canWrite={canWrite} />
    </Stack>
  );
}
