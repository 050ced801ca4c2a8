import { Group, List, Paper, Stack, Text } from '@mantine/core';
import { formatDate } from '../components/format';
import { ToneBadge } from '../components/StatusBadge';
import { baseName, chainPosition, type ArchiveListing } from './archive-listing';

/**
 * Where the browsed backup sits in its incremental chain, and which backups a restore reads: deleting one of them
 * by hand breaks every later backup of the chain, so they are named here.
 */
export function ChainSummary({ listing }: { listing: ArchiveListing }) {
  const isIncremental = (listing.chain?.sequence ?? 0) > 0;
  return (
    <Paper withBorder p="sm" data-testid="archive-chain">
      <Stack gap={4}>
        <Group gap="xs">
          <ToneBadge color={isIncremental ? 'blue' : 'green'} data-testid="archive-chain-position">
            {isIncremental ? `incremental ${listing.chain!.sequence}` : 'full'}
          </ToneBadge>
          <Text size="sm">{chainPosition(listing)}</Text>
        </Group>
        <Text size="sm" c="dimmed">
          Created {formatDate(listing.createdAt)}
          {listing.deletions.length > 0 && `; ${listing.deletions.length} ${listing.deletions.length === 1 ? 'path' : 'paths'} deleted since the previous backup`}
          {listing.renames.length > 0 && `; ${listing.renames.length} renamed`}
        </Text>
        <Text size="sm">Backups a restore of this snapshot reads (oldest first):</Text>
        <List size="sm" data-testid="archive-required">
          {listing.requiredArchives.map((archive) => (
            <List.Item key={archive}>
              <Text size="sm" span style={{ wordBreak: 'break-all' }}>
                {baseName(archive)}
              </Text>
              {baseName(archive) === baseName(listing.file) && (
                <Text size="sm" span c="dimmed">
                  {' '}
                  (this backup)
                </Text>
              )}
            </List.Item>
          ))}
        </List>
      </Stack>
    </Paper>
  );
}
