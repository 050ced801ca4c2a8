import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { MysqlRestoreBody } from './mysql-restore-request';
import type { RestoreTarget } from './restore-target';

/** How often the panel reads the window again while the page is visible (react-query pauses in hidden tabs). */
export const POINT_IN_TIME_REFRESH_MS = 10_000;

/** `GET /api/jobs/:id/point-in-time`, every ten seconds; off without history:read on the job. */
export function usePointInTime(jobId: string, enabled: boolean) {
  return useQuery({
    queryKey: ['jobs', jobId, 'point-in-time'],
    queryFn: () => unwrap(api.GET('/api/jobs/{id}/point-in-time', { params: { path: { id: jobId } } })),
    enabled,
    refetchInterval: POINT_IN_TIME_REFRESH_MS,
  });
}

export type PointInTimeView = NonNullable<ReturnType<typeof usePointInTime>['data']>['data'];

/** The body of `POST /api/jobs/:id/point-in-time/restore` for a PostgreSQL job (a MySQL job's: MysqlRestoreBody). */
export interface PostgresRestoreBody {
  target: RestoreTarget;
  targetPath: string;
  servePort?: number;
  privateKey?: string;
}

export type PointInTimeRestoreBody = PostgresRestoreBody | MysqlRestoreBody;

/** The slice of the typed client this call needs, for a route the generated schema may not list yet. */
type UntypedPost = (path: string, init: { params: { path: { id: string } }; body: PointInTimeRestoreBody }) => Promise<{ data?: { data?: { executionId?: string } }; error?: unknown; response: Response }>;

/**
 * Starts a restore to a point in time (permission storage:restore); resolves with the execution to follow. The
 * route came with the same issue as this dialog and may be newer than the client's generated schema, hence the
 * untyped call through the same client (cookie, CSRF token, error handling as every other call).
 */
export async function startPointInTimeRestore(jobId: string, body: PointInTimeRestoreBody): Promise<{ executionId: string }> {
  const untyped = api as unknown as { POST: UntypedPost };
  const answer = await unwrap(untyped.POST('/api/jobs/{id}/point-in-time/restore', { params: { path: { id: jobId } }, body }));
  const executionId = answer.data?.executionId;
  if (!executionId) throw new Error('The server accepted the restore but did not name its run');
  return { executionId };
}
