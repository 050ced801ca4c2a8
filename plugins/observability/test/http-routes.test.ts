import { describe, expect, it } from 'vitest';
import { HoldfastMetrics, HttpLatencyObserver } from '../src/index.js';

describe('HTTP route labels of the latency histogram', () => {
  const observer = () => new HttpLatencyObserver(new HoldfastMetrics({ database: () => ({}) as never, catalog: () => undefined, withProcessMetrics: false }));

  it('replaces id segments by :id, drops the query string, labels 404/405 unmatched', () => {
    const routes = observer();
    expect(routes.routeOf('/api/jobs/3f2b8c1e-9a4d-4e5f-8a6b-0c1d2e3f4a5b/run', 202)).toBe('/api/jobs/:id/run');
    expect(routes.routeOf('/api/executions/12345', 200)).toBe('/api/executions/:id');
    expect(routes.routeOf('/api/storage/public-download?token=secret-token', 200)).toBe('/api/storage/public-download');
    expect(routes.routeOf('/api/anything-at-all', 404)).toBe('unmatched');
    expect(routes.routeOf('/api/jobs', 405)).toBe('unmatched');
    expect(routes.routeOf('/api/settings/system-tasks/HEALTH_CHECK/run', 202)).toBe('/api/settings/system-tasks/HEALTH_CHECK/run');
  });

  it('keeps at most 300 distinct routes; later new ones count as other', () => {
    const routes = observer();
    for (let index = 0; index < 300; index++) expect(routes.routeOf(`/api/r${index}x`, 200)).toBe(`/api/r${index}x`);
    expect(routes.routeOf('/api/one-more', 200)).toBe('other');
    expect(routes.routeOf('/api/r7x', 200)).toBe('/api/r7x');
  });

  it('observed requests appear in the exposition with method, route and status', async () => {
    const metrics = new HoldfastMetrics({ database: () => ({}) as never, catalog: () => undefined, withProcessMetrics: false });
    metrics.observeRequest('GET', '/api/jobs/:id', 200, 0.02);
    const text = await metrics.registry.getSingleMetricAsString('holdfast_http_request_duration_seconds');
    expect(text).toContain('holdfast_http_request_duration_seconds_count{method="GET",route="/api/jobs/:id",status="200"} 1');
    expect(text).toContain('holdfast_http_request_duration_seconds_bucket{le="0.025",method="GET",route="/api/jobs/:id",status="200"} 1');
  });
});
