// GET /api/point-in-time narrows to the jobs a scoped identity may read, and turns dates into ISO text. The route
// over a real server (permissions, figures from the archive) is in point-in-time-route.test.ts.
import type { AccessPolicy, AuthContext, PointInTimeFigures } from '@holdfast/kernel';
import { describe, expect, it } from 'vitest';
import { pointInTimeOverviewRoutes } from '../../src/pitr/point-in-time-overview-route.js';

const figures = (jobId: string, windowEnd: Date | null): PointInTimeFigures => ({
  jobId,
  jobName: `job ${jobId}`,
  windowStart: windowEnd ? new Date(windowEnd.getTime() - 60_000) : null,
  windowEnd,
  recoveryPointSeconds: windowEnd ? 4.6 : null,
  segments: 3,
  storedBytes: 1234,
  slotLagBytes: null,
});

const scopedTo = (ids: string[] | 'all'): AccessPolicy => ({ isAllowed: async () => true, visibleIds: async () => ids });

async function answer(policy: AccessPolicy | undefined, auth: AuthContext | null = { kind: 'api-key' } as unknown as AuthContext) {
  const archives = [figures('a', new Date('2026-12-06T10:00:00Z')), figures('b', null)];
  const [route] = pointInTimeOverviewRoutes({ stats: () => ({ archives: async () => archives }), access: () => policy });
  return (await route!.handler({ params: {}, query: {}, body: undefined, auth, ip: '127.0.0.1', userAgent: undefined, secure: false, headers: {}, signal: new AbortController().signal } as never)) as {
    data: Array<Record<string, unknown>>;
  };
}

describe('GET /api/point-in-time', () => {
  it('lists every archive for an unrestricted identity, dates as ISO text and whole seconds', async () => {
    const { data } = await answer(scopedTo('all'));
    expect(data).toEqual([
      { jobId: 'a', jobName: 'job a', windowStart: '2026-12-06T09:59:00.000Z', windowEnd: '2026-12-06T10:00:00.000Z', recoveryPointSeconds: 5, segments: 3, storedBytes: 1234, slotLagBytes: null },
      { jobId: 'b', jobName: 'job b', windowStart: null, windowEnd: null, recoveryPointSeconds: null, segments: 3, storedBytes: 1234, slotLagBytes: null },
    ]);
  });

  it('shows a scoped identity only its granted jobs, and nothing when it has none', async () => {
    expect((await answer(scopedTo(['b']))).data.map((entry) => entry.jobId)).toEqual(['b']);
    expect((await answer(scopedTo([]))).data).toEqual([]);
  });
});
