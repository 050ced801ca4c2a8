import { Button, Group, MultiSelect, Paper, Select, Stack, Switch, Table, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useAdapters } from '../api/adapters';
import { api, unwrap } from '../api/client';
import { ErrorAlert, QueryState } from '../components/PageState';
import { SYSTEM_EVENTS } from './system-events';

type NotifyUser = 'none' | 'also' | 'only';
type EventEntry = { enabled: boolean; channels: string[] | null; notifyUser: NotifyUser };
type Config = { events: Record<string, EventEntry>; globalChannels: string[] };


/** System notification events: on/off per event, and the channels each goes to (else the global list). */
export default function SystemEventsPage() {
  const queryClient = useQueryClient();
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => unwrap(api.GET('/api/settings')) });
  const channels = useAdapters('notification');
  const [config, setConfig] = useState<Config>({ events: {}, globalChannels: [] });
  useEffect(() => {
    if (settings.data) setConfig(settings.data['notifications.config'] as Config);
  }, [settings.data]);
  const save = useMutation({
    mutationFn: () => unwrap(api.PUT('/api/settings', { body: { 'notifications.config': config } })),
    onSuccess: async () => {
      notifications.show({ color: 'green', message: 'System notifications saved', closeButtonProps: { 'aria-label': 'Dismiss' } });
      await queryClient.invalidateQueries({ queryKey: ['settings'] });
    },
  });
  const channelChoices = (channels.data ?? []).map((channel) => ({ value: channel.id, label: channel.name }));
  const entry = (name: string): EventEntry => config.events[name] ?? { enabled: SYSTEM_EVENTS.find((event) => event.name === name)!.enabledByDefault, channels: null, notifyUser: 'none' };
  const update = (name: string, change: Partial<EventEntry>) => setConfig({ ...config, events: { ...config.events, [name]: { ...entry(name), ...change } } });
  return (
    <Stack>
      <Title order={2}>System notifications</Title>
      <Text size="sm">
        Events outside backup jobs. Each goes to its own channels when some are chosen, else to the global channels. Backup outcomes are set per job through notification templates.
      </Text>
      <QueryState isPending={settings.isPending || channels.isPending} error={settings.error ?? channels.error}>
        <Paper withBorder p="md">
          <form
            onSubmit={(event) => {
              event.preventDefault();
              save.mutate();
            }}
          >
            <Stack>
              <MultiSelect
                label="Global channels"
                description="Used by every event that names no channels of its own"
                data={channelChoices}
                value={config.globalChannels}
                onChange={(globalChannels) => setConfig({ ...config, globalChannels })}
                placeholder={channelChoices.length ? 'Choose channels' : 'No channels yet'}
                data-field="global-channels"
              />
              <Table.ScrollContainer minWidth={760}>
                <Table striped data-testid="system-events">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>Event</Table.Th>
                      <Table.Th>Enabled</Table.Th>
                      <Table.Th>Channels</Table.Th>
                      <Table.Th>Notify the user</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {SYSTEM_EVENTS.map((event) => {
                      const current = entry(event.name);
                      return (
                        <Table.Tr key={event.name} data-testid="system-event-row" data-event={event.name}>
                          <Table.Td>
                            <Text size="sm">{event.label}</Text>
                            <Text size="xs">
                              {event.name}
                            </Text>
                          </Table.Td>
                          <Table.Td>
                            <Switch aria-label={`Enable ${event.label}`} checked={current.enabled} onChange={(change) => update(event.name, { enabled: change.currentTarget.checked })} />
                          </Table.Td>
                          <Table.Td>
                            <MultiSelect
                              aria-label={`Channels for ${event.label}`}
                              size="xs"
                              data={channelChoices}
                              value={current.channels ?? []}
                              placeholder="Global channels"
                              onChange={(value) => update(event.name, { channels: value.length ? value : null })}
                            />
                            {/* An enabled event with no channel of its own and no global channel would go nowhere, silently (issue 47). */}
                            {current.enabled && !current.channels?.length && config.globalChannels.length === 0 && (
                              <Text size="xs" className="hf-warning-text" mt={4} data-testid="event-goes-nowhere">
                                Goes nowhere: choose a channel here or a global channel
                              </Text>
                            )}
                          </Table.Td>
                          <Table.Td>
                            {event.userEvent ? (
                              <Select
                                aria-label={`Notify the user for ${event.label}`}
                                size="xs"
                                allowDeselect={false}
                                data={[
                                  { value: 'none', label: 'No' },
                                  { value: 'also', label: 'Also (email channels)' },
                                  { value: 'only', label: 'Only the user' },
                                ]}
                                value={current.notifyUser}
                                onChange={(value) => update(event.name, { notifyUser: (value ?? 'none') as NotifyUser })}
                              />
                            ) : (
                              '—'
                            )}
                          </Table.Td>
                        </Table.Tr>
                      );
                    })}
                  </Table.Tbody>
                </Table>
              </Table.ScrollContainer>
              {save.error && <ErrorAlert error={save.error} title="Could not save" />}
              <Group>
                <Button type="submit" loading={save.isPending}>
                  Save system notifications
                </Button>
              </Group>
            </Stack>
          </form>
        </Paper>
      </QueryState>
    </Stack>
  );
}
