// The job list behind the dashboard and the history search: read fresh while small, reused for 5 s once large.
import { describe, expect, it } from 'vitest';
import { CachedJobDirectory, type JobDirectory, type ScheduledJob } from '../../src/scheduler/job-directory.js';

function countingDirectory(size: number) {
  const state = { loads: 0, size };
  const inner: JobDirectory = {
    scheduledJobs: async () => {
      state.loads += 1;
      return Array.from({ length: state.size }, (_, i): ScheduledJob => ({ jobId: `job-${i}`, name: `Job ${i}`, schedule: '0 3 * * *', enabled: true, scheduleFrom: 'job' }));
    },
    jobIdsNamed: async () => [],
    storageDestinations: async () => [],
  };
  return { state, inner };
}

describe('CachedJobDirectory', () => {
  it('reads a small list on every request, sharing only a load in flight', async () => {
    const { state, inner } = countingDirectory(10);
    const directory = new CachedJobDirectory(inner, 5_000, 1_000, () => 0);
    await Promise.all([directory.scheduledJobs(), directory.scheduledJobs()]);
    expect(state.loads).toBe(1);
    await directory.scheduledJobs();
    expect(state.loads).toBe(2);
  });

  it('reuses a list of 1,000 jobs or more for 5 s, and answers name searches from it', async () => {
    const { state, inner } = countingDirectory(1_500);
    let now = 0;
    const directory = new CachedJobDirectory(inner, 5_000, 1_000, () => now);
    await directory.scheduledJobs();
    now = 4_999;
    expect(await directory.jobIdsNamed('job 149', 5)).toEqual(['job-149', 'job-1490', 'job-1491', 'job-1492', 'job-1493']);
    expect(state.loads).toBe(1);
    now = 5_000;
    await directory.scheduledJobs();
    expect(state.loads).toBe(2);
  });
});
