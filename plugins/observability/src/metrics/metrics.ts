import type { OrmDatabase } from '@holdfast/orm-port';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { AdapterHealth, BackupOutcomeEvent, DeliveryStats, EventBus, ExecutionStats, JobCatalog, PointInTimeFigures, PointInTimeStats } from '@holdfast/kernel';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Buckets of run durations (seconds): 1 s to 6 h. */
const RUN_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600];
/** Buckets of HTTP latency (seconds). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const OUTCOMES = { backup_success: 'Success', backup_partial: 'Partial', backup_failure: 'Failed' } as const;

/**
 * The Prometheus registry of one server. Run counters, durations and bytes move with the engine's outcome events
 * of this process; queue depth, running count, last-success time, adapter health and notification failures are read
 * at scrape time (through the engine's `ExecutionStats`, the catalog's `JobCatalog.listAdapterConfigs` and the
 * notifications plugin's `DeliveryStats` ports, and observability's own `adapter_health`), so
 * every process of a shared database answers the same for them.
 */
export class HoldfastMetrics {
  readonly registry = new Registry();
  private readonly runs: Counter<'job' | 'status'>;
  private readonly durations: Histogram<'job' | 'status'>;
  private readonly bytes: Counter<'job'>;
  private readonly http: Histogram<'method' | 'route' | 'status'>;

  constructor(
    private readonly deps: {
      database: () => OrmDatabase;
      catalog: () => JobCatalog | undefined;
      /** The current health of each configuration (observability's own `adapter_health`); without it none is shown. */
      health?: () => Pick<AdapterHealth, 'statesOf'> | undefined;
      /** The engine's queue and history figures; without the engine those gauges stay empty. */
      executions?: () => ExecutionStats | undefined;
      /** The notifications plugin's delivery figures; without it that gauge stays empty. */
      deliveries?: () => DeliveryStats | undefined;
      /** The engine's point-in-time archive figures; without them the `holdfast_pitr_*` gauges stay empty. */
      pointInTime?: () => PointInTimeStats | undefined;
      withProcessMetrics?: boolean;
    },
  ) {
    if (deps.withProcessMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'holdfast_process_' });
    this.runs = new Counter({ name: 'holdfast_backup_runs_total', help: 'Finished backup runs by job and final status (this process)', labelNames: ['job', 'status'], registers: [this.registry] });
    this.durations = new Histogram({ name: 'holdfast_backup_run_duration_seconds', help: 'Duration of finished backup runs', labelNames: ['job', 'status'], buckets: RUN_BUCKETS, registers: [this.registry] });
    this.bytes = new Counter({ name: 'holdfast_backup_bytes_written_total', help: 'Bytes of backup files written (this process)', labelNames: ['job'], registers: [this.registry] });
    this.http = new Histogram({ name: 'holdfast_http_request_duration_seconds', help: 'HTTP request latency by route template and status', labelNames: ['method', 'route', 'status'], buckets: HTTP_BUCKETS, registers: [this.registry] });

    const jobNames = async (ids: string[]) => (ids.length ? ((await this.deps.catalog()?.jobNames(ids)) ?? new Map<string, string>()) : new Map<string, string>());
    new Gauge({
      name: 'holdfast_job_last_success_timestamp_seconds',
      help: 'End time (Unix seconds) of the last successful backup of each job',
      labelNames: ['job_id', 'job'],
      registers: [this.registry],
      async collect() {
        this.reset();
        const stats = deps.executions?.();
        if (!stats) return;
        const rows = await stats.lastSuccessfulBackups();
        const names = await jobNames(rows.map((row) => row.jobId));
        for (const row of rows) this.set({ job_id: row.jobId, job: names.get(row.jobId) ?? row.jobId }, row.endedAt.getTime() / 1000);
      },
    });
    const countByStatus = (status: 'Pending' | 'Running') => async (target: Gauge) => {
      const stats = deps.executions?.();
      if (stats) target.set(await stats.countByStatus(status));
    };
    const pending = countByStatus('Pending');
    const running = countByStatus('Running');
    new Gauge({ name: 'holdfast_queue_depth', help: 'Executions waiting in the queue (Pending)', registers: [this.registry], async collect() { await pending(this); } });
    new Gauge({ name: 'holdfast_running_executions', help: 'Executions running now (all processes)', registers: [this.registry], async collect() { await running(this); } });
    new Gauge({
      name: 'holdfast_adapter_health',
      help: 'Health of each source and destination: 1 for its current status (ONLINE, DEGRADED, OFFLINE), 0 for the others',
      labelNames: ['config_id', 'name', 'type', 'adapter', 'status'],
      registers: [this.registry],
      async collect() {
        this.reset();
        const health = deps.health?.();
        if (!health) return;
        const configs = (await deps.catalog()?.listAdapterConfigs?.({})) ?? [];
        const checked = configs.filter((config) => config.type === 'database' || config.type === 'storage');
        const states = await health.statesOf(checked.map((config) => config.configId));
        const rows = checked.map((config) => ({ id: config.configId, name: config.name, type: config.type, adapter_id: config.adapterId, last_status: states.get(config.configId)?.lastStatus ?? 'ONLINE' }));
        for (const row of rows) {
          for (const status of ['ONLINE', 'DEGRADED', 'OFFLINE']) this.set({ config_id: row.id, name: row.name, type: row.type, adapter: row.adapter_id, status }, row.last_status === status ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: 'holdfast_notification_failures',
      help: 'Failed notification deliveries in the notification log (kept for notification.logRetentionDays), by event type',
      labelNames: ['event'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const row of (await deps.deliveries?.()?.failuresByEvent()) ?? []) this.set({ event: row.event }, row.count);
      },
    });
    this.registerPointInTimeGauges();
  }

  /**
   * The `holdfast_pitr_*` gauges (docs/pitr.md, "Watching the archive"), one series per point-in-time job labelled
   * `job` (the name) and `job_id`. One read of the engine's figures serves all six in a scrape: prom-client starts
   * the collects in registration order, so the first gauge reads afresh and the other five take its answer.
   */
  private registerPointInTimeGauges(): void {
    let current: Promise<PointInTimeFigures[]> = Promise.resolve([]);
    const figures = (isFirst: boolean) => {
      // A failed read leaves the gauges empty for this scrape rather than failing the whole scrape.
      if (isFirst) current = (this.deps.pointInTime?.()?.archives() ?? Promise.resolve([])).catch(() => []);
      return current;
    };
    let registered = 0;
    const gauge = (name: string, help: string, value: (row: PointInTimeFigures) => number | null) => {
      const isFirst = registered++ === 0;
      return new Gauge({
        name,
        help,
        labelNames: ['job_id', 'job'],
        registers: [this.registry],
        async collect() {
          this.reset();
          for (const row of await figures(isFirst)) {
            const reading = value(row);
            if (reading !== null) this.set({ job_id: row.jobId, job: row.jobName }, reading);
          }
        },
      });
    };
    const seconds = (date: Date | null) => (date ? date.getTime() / 1000 : null);
    gauge('holdfast_pitr_recovery_point_seconds', 'Seconds since the end of the recoverable window (the newest instant a point-in-time restore reaches); absent without a window', (row) => row.recoveryPointSeconds);
    gauge('holdfast_pitr_slot_lag_bytes', "Bytes of log the job's replication slot holds on the database server beyond what the stream received (last reading, at most 5 minutes old)", (row) => row.slotLagBytes);
    gauge('holdfast_pitr_window_start_timestamp_seconds', 'Start of the recoverable window (Unix seconds)', (row) => seconds(row.windowStart));
    gauge('holdfast_pitr_window_end_timestamp_seconds', 'End of the recoverable window (Unix seconds)', (row) => seconds(row.windowEnd));
    gauge('holdfast_pitr_segments', 'Archived change-log pieces (completed segments and current partials)', (row) => row.segments);
    gauge('holdfast_pitr_stored_bytes', 'Bytes of the archived change log, one copy', (row) => row.storedBytes);
  }

  /** Counts outcome events; returns the unsubscribe functions. */
  listen(events: EventBus): Array<() => void> {
    return (Object.keys(OUTCOMES) as Array<keyof typeof OUTCOMES>).map((name) =>
      events.on(name, (event: BackupOutcomeEvent) => {
        const job = event.jobName ?? event.jobId ?? 'unknown';
        const status = event.status ?? OUTCOMES[name];
        this.runs.inc({ job, status });
        if (event.durationMs !== undefined) this.durations.observe({ job, status }, event.durationMs / 1000);
        if (event.size) this.bytes.inc({ job }, event.size);
      }),
    );
  }

  /** Records one HTTP request (route template, never the raw path, to keep label sets bounded). */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.http.observe({ method, route, status: String(status) }, seconds);
  }

  /** The text exposition format. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** A path segment that is a record id (UUID, long hex or number) rather than a fixed word. */
const ID_SEGMENT = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,}|\d+)$/i;
/** Distinct route labels kept; later new ones are counted as `other` so random paths cannot grow the label set. */
const MAX_ROUTES = 300;

/**
 * Observes every HTTP response of this process through Node's `http.server.*` diagnostics channels, so no web
 * framework code is touched. The route label is the path with id segments replaced by `:id` (query strings never
 * appear); 404/405 answers are labelled `unmatched`.
 */
export class HttpLatencyObserver {
  private readonly startedAt = new WeakMap<object, number>();
  private readonly routes = new Set<string>();
  private readonly onStart = (message: unknown) => {
    const { request } = message as { request: object };
    this.startedAt.set(request, performance.now());
  };
  private readonly onFinish = (message: unknown) => {
    const { request, response } = message as { request: { method?: string; url?: string }; response: { statusCode: number } };
    const started = this.startedAt.get(request);
    if (started === undefined) return;
    this.metrics.observeRequest(request.method ?? 'GET', this.routeOf(request.url ?? '/', response.statusCode), response.statusCode, (performance.now() - started) / 1000);
  };

  constructor(private readonly metrics: HoldfastMetrics) {}

  start(): void {
    subscribe('http.server.request.start', this.onStart);
    subscribe('http.server.response.finish', this.onFinish);
  }

  stop(): void {
    unsubscribe('http.server.request.start', this.onStart);
    unsubscribe('http.server.response.finish', this.onFinish);
  }

  routeOf(url: string, status: number): string {
    if (status === 404 || status === 405) return 'unmatched';
    const path = url.split('?')[0] ?? '/';
    const route = path
      .split('/')
      .map((segment) => (ID_SEGMENT.test(segment) ? ':id' : segment))
      .join('/');
    if (this.routes.has(route)) return route;
    if (this.routes.size >= MAX_ROUTES) return 'other';
    this.routes.add(route);
    return route;
  }
}
