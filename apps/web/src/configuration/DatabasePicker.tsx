import { TagsInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, errorMessage, unwrap } from '../api/client';
import { formatBytes } from '../components/format';

/**
 * The job's databases, picked from what the source holds now (`GET /api/adapters/:id/databases`, issue 47 item 6),
 * with sizes. A name can still be typed: a source that is down today, or a database made later, must not block
 * the job. Sources that cannot list their databases (directories, volumes) get the plain field.
 * The list shows at most {@link SHOWN} names, narrowed by typing, and never scrolls: a scrolling option list is a
 * region the keyboard cannot scroll (axe), and a server with hundreds of databases is found faster by typing.
 */
const SHOWN = 8;

export function DatabasePicker({ sourceId, canList, value, onChange }: { sourceId: string; canList: boolean; value: string[]; onChange(next: string[]): void }) {
  const listing = useQuery({
    queryKey: ['source-databases', sourceId],
    queryFn: async () => (await unwrap(api.GET('/api/adapters/{id}/databases', { params: { path: { id: sourceId } } }))).databases,
    enabled: canList && sourceId !== '',
    retry: false,
    staleTime: 60_000,
  });
  const found = listing.data ?? [];
  const sizes = new Map(found.map((database) => [database.name, database.sizeBytes]));
  const description = !canList || sourceId === ''
    ? 'Names of the databases to back up (empty: every database of the source)'
    : listing.error
      ? `Could not list the source's databases (${errorMessage(listing.error)}); type the names, or leave empty for every database`
      : listing.isPending
        ? 'Reading the databases of the source...'
        : `Pick from the ${found.length} database${found.length === 1 ? '' : 's'} the source holds now${found.length > SHOWN ? ', typing narrows the list' : ''} (empty: every database)`;
  return (
    <TagsInput
      label="Databases"
      description={description}
      data={found.map((database) => database.name)}
      renderOption={({ option }) => {
        const size = sizes.get(option.value);
        return `${option.value}${size === null || size === undefined ? '' : ` (${formatBytes(size)})`}`;
      }}
      limit={SHOWN}
      withScrollArea={false}
      value={value}
      onChange={onChange}
      data-field="job-databases"
    />
  );
}
