import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from './client';

export type AdapterType = 'database' | 'storage' | 'notification';

/** URL segment and wording of each adapter configuration type. */
export const ADAPTER_KINDS: Record<AdapterType, { path: string; plural: string; singular: string }> = {
  database: { path: 'sources', plural: 'Sources', singular: 'source' },
  storage: { path: 'destinations', plural: 'Destinations', singular: 'destination' },
  notification: { path: 'channels', plural: 'Notification channels', singular: 'channel' },
};

export function adapterTypeOfPath(path: string): AdapterType {
  return (Object.entries(ADAPTER_KINDS).find(([, kind]) => kind.path === path)?.[0] as AdapterType | undefined) ?? 'database';
}

export function useAdapterTypes() {
  return useQuery({ queryKey: ['adapter-types'], queryFn: () => unwrap(api.GET('/api/adapters/types')), staleTime: 300_000 });
}

/** Read and write permission of each configuration type (the API's rule). */
export const ADAPTER_PERMISSIONS: Record<AdapterType, { read: string; write: string }> = {
  database: { read: 'sources:read', write: 'sources:write' },
  storage: { read: 'destinations:read', write: 'destinations:write' },
  notification: { read: 'notifications:read', write: 'notifications:write' },
};

/** Configurations of a type; `enabled: false` when the caller may not read them (nothing is asked, nothing fails). */
export function useAdapters(type?: AdapterType, enabled = true) {
  return useQuery({
    queryKey: ['adapters', type ?? 'all'],
    queryFn: () => unwrap(api.GET('/api/adapters', { params: { query: type ? { type } : {} } })),
    enabled,
  });
}
