import { useQuery } from '@tanstack/react-query';
import { useAdapters } from '../api/adapters';
import { api, unwrap } from '../api/client';

/** Words for the resource types a scoped grant may name (GET /api/permissions, scopableResources). */
export const RESOURCE_LABELS: Record<string, string> = {
  job: 'Jobs',
  source: 'Sources',
  destination: 'Destinations',
  notification: 'Notification channels',
  credential: 'Credential profiles',
  vault: 'Encryption profiles',
};

/** The records of each resource type, as select choices, for the scoped grants editor. */
export function useScopeChoices(): Record<string, Array<{ value: string; label: string }>> {
  const jobs = useQuery({ queryKey: ['jobs'], queryFn: () => unwrap(api.GET('/api/jobs')) });
  const sources = useAdapters('database');
  const destinations = useAdapters('storage');
  const channels = useAdapters('notification');
  const credentials = useQuery({ queryKey: ['credentials'], queryFn: () => unwrap(api.GET('/api/credentials')) });
  const vault = useQuery({ queryKey: ['vault'], queryFn: () => unwrap(api.GET('/api/vault')) });
  const choices = (records: Array<{ id: string; name: string }> | undefined) => (records ?? []).map((record) => ({ value: record.id, label: record.name }));
  return {
    job: choices(jobs.data),
    source: choices(sources.data),
    destination: choices(destinations.data),
    notification: choices(channels.data),
    credential: choices(credentials.data),
    vault: choices(vault.data),
  };
}
