import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { client } from '../api/client';

/**
 * Follows the event stream of each run still going and refreshes the dashboard's queries when one ends, instead
 * of polling the API on a timer (issue 47: the app's own reads tripped the rate limit). Nothing is read while
 * nothing runs.
 */
export function useRefreshOnRunEnd(runningIds: readonly string[]): void {
  const queryClient = useQueryClient();
  const key = runningIds.join(',');
  useEffect(() => {
    if (!key) return;
    const abort = new AbortController();
    for (const id of key.split(',')) {
      void (async () => {
        try {
          for await (const event of client.watch(id, { signal: abort.signal })) {
            if (event.type !== 'status') continue;
            await Promise.all([
              queryClient.invalidateQueries({ queryKey: ['dashboard'] }),
              queryClient.invalidateQueries({ queryKey: ['history', 'latest'] }),
            ]);
          }
        } catch {
          // A broken stream only means this refresh does not happen; the page still shows what it read.
        }
      })();
    }
    return () => abort.abort();
  }, [key, queryClient]);
}
