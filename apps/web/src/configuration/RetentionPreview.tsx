import { Button, Group, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { formatDate } from '../components/format';
import { QueryState } from '../components/PageState';
import { ToneBadge } from '../components/StatusBadge';

/**
 * What retention would keep and prune of a saved job's backups, per destination, with the policy's reason. Asked
 * on demand: it lists the files of every destination.
 */
export function RetentionPreview({ jobId }: { jobId: string }) {
  const preview = useQuery({
    queryKey: ['jobs', jobId, 'retention-preview'],
    queryFn: () => unwrap(api.GET('/api/jobs/{id}/retention-preview', { params: { path: { id: jobId } } })),
    enabled: false,
  });
  return (
    <Paper withBorder p="md" data-testid="retention-preview">
      <Group justify="space-between" mb="sm">
        <Title order={3} size="h4">
          Retention preview
        </Title>
        <Button variant="default" size="xs" onClick={() => preview.refetch()} loading={preview.isFetching}>
          {preview.data ? 'Refresh preview' : 'Show retention preview'}
        </Button>
      </Group>
      {preview.isPending && !preview.isFetching && !preview.error ? (
        <Text size="sm">
          Which backups each destination&apos;s policy keeps and which it would prune (saved settings).
        </Text>
      ) : (
        <QueryState isPending={preview.isPending} error={preview.error} isEmpty={preview.data?.data.length === 0} empty="The job has no destinations.">
          <Stack>
            {preview.data?.data.map((destination) => (
              <div key={destination.configId} data-testid="retention-destination">
                <Text size="sm" fw={500}>
                  {destination.name}
                </Text>
                {destination.error ? (
                  <Text size="sm" fw={600}>
                    {destination.error}
                  </Text>
                ) : destination.backups.length === 0 ? (
                  <Text size="sm">
                    No backups yet.
                  </Text>
                ) : (
                  <Table.ScrollContainer minWidth={560}>
                    <Table striped>
                      <Table.Thead>
                        <Table.Tr>
                          <Table.Th>Backup</Table.Th>
                          <Table.Th>Created</Table.Th>
                          <Table.Th>Verdict</Table.Th>
                          <Table.Th>Reason</Table.Th>
                        </Table.Tr>
                      </Table.Thead>
                      <Table.Tbody>
                        {destination.backups.map((backup) => (
                          <Table.Tr key={backup.key} data-testid="retention-backup">
                            <Table.Td style={{ wordBreak: 'break-all' }}>{backup.key}</Table.Td>
                            <Table.Td>{formatDate(backup.createdAt)}</Table.Td>
                            <Table.Td>
                              <ToneBadge color={backup.action === 'keep' ? 'green' : 'red'}>{backup.locked ? 'keep (locked)' : backup.action}</ToneBadge>
                            </Table.Td>
                            <Table.Td>
                              {backup.reason}
                              {/* Object-locked destinations: the date the store keeps the backup until, whatever the verdict. */}
                              {backup.retainUntil ? (
                                <Text size="xs" c="dimmed">
                                  Object lock until {formatDate(backup.retainUntil)}
                                </Text>
                              ) : null}
                            </Table.Td>
                          </Table.Tr>
                        ))}
                      </Table.Tbody>
                    </Table>
                  </Table.ScrollContainer>
                )}
              </div>
            ))}
          </Stack>
        </QueryState>
      )}
    </Paper>
  );
}
