// Issue 43.5: the holdfast_pitr_* gauges of /metrics, fed by the engine's TOKENS.PointInTimeStats port (here a port
// double with fixed figures: the engine's own test checks the port against a streaming job).
import type { PointInTimeFigures } from '@holdfast/kernel';
import { describe, expect, it } from 'vitest';
import { HoldfastMetrics } from '../src/index.js';

const figures: PointInTimeFigures[] = [
  { jobId: 'j1', jobName: 'cluster', windowStart: new Date('2026-12-06T03:00:00Z'), windowEnd: new Date('2026-12-06T04:00:00Z'), recoveryPointSeconds: 12, segments: 7, storedBytes: 123_456, slotLagBytes: 65_536 },
  { jobId: 'j2', jobName: 'fresh', windowStart: null, windowEnd: null, recoveryPointSeconds: null, segments: 0, storedBytes: 0, slotLagBytes: null },
];

describe('holdfast_pitr_* gauges', () => {
  it('one series per job; a job without a window or lag reading has none of those series', async () => {
    let reads = 0;
    const metrics = new HoldfastMetrics({
      database: () => ({}) as never,
      catalog: () => undefined,
      withProcessMetrics: false,
      pointInTime: () => ({ archives: async () => (reads++, figures) }),
    });
    const text = await metrics.render();
    expect(text).toContain('holdfast_pitr_recovery_point_seconds{job_id="j1",job="cluster"} 12');
    expect(text).toContain('holdfast_pitr_slot_lag_bytes{job_id="j1",job="cluster"} 65536');
    expect(text).toContain(`holdfast_pitr_window_start_timestamp_seconds{job_id="j1",job="cluster"} ${Date.parse('2026-12-06T03:00:00Z') / 1000}`);
    expect(text).toContain(`holdfast_pitr_window_end_timestamp_seconds{job_id="j1",job="cluster"} ${Date.parse('2026-12-06T04:00:00Z') / 1000}`);
    expect(text).toContain('holdfast_pitr_segments{job_id="j1",job="cluster"} 7');
    expect(text).toContain('holdfast_pitr_stored_bytes{job_id="j1",job="cluster"} 123456');
    expect(text).toContain('holdfast_pitr_segments{job_id="j2",job="fresh"} 0');
    expect(text).not.toMatch(/holdfast_pitr_(recovery_point_seconds|slot_lag_bytes|window_start_timestamp_seconds)\{job_id="j2"/);
    // One read of the engine's figures serves the six gauges of a scrape.
    expect(reads).toBe(1);
    await metrics.render();
    expect(reads).toBe(2);
  });

  it('stay empty without the engine, and a failing read empties them instead of failing the scrape', async () => {
    const without = new HoldfastMetrics({ database: () => ({}) as never, catalog: () => undefined, withProcessMetrics: false });
    expect(await without.render()).not.toMatch(/holdfast_pitr_segments\{/);
    const failing = new HoldfastMetrics({ database: () => ({}) as never, catalog: () => undefined, withProcessMetrics: false, pointInTime: () => ({ archives: async () => Promise.reject(new Error('database gone')) }) });
    const text = await failing.render();
    expect(text).toContain('# TYPE holdfast_pitr_segments gauge');
    expect(text).not.toMatch(/holdfast_pitr_segments\{/);
  });
});
