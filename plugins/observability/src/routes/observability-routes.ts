import type { OrmDatabase } from '@holdfast/orm-port';
import {
  defineRoute,
  ForbiddenError,
  NotFoundError,
  routeResult,
  TOKENS,
  UnauthorizedError,
  ValidationError,
  type AuthContext,
  type RouteDefinition,
} from '@holdfast/kernel';
import type { DependencyContainer } from 'tsyringe';
import { z } from 'zod';
import type { HealthChecker } from '../health/health-check.js';
import type { HoldfastMetrics } from '../metrics/metrics.js';
import { metricsVerdict, type MetricsAccess } from '../metrics/metrics-access.js';
import {
  configBackupSettingsSchema,
  healthSettingsSchema,
  integrityCheckSettingsSchema,
  storageAlertSettingsSchema,
  tokenHash,
  type ObservabilitySettings,
  type ObservabilitySettingsValues,
} from '../settings.js';
import type { StorageAlerts } from '../storage/storage-alerts.js';
import type { TaskRunStore } from '../tasks/run-store.js';
import type { SystemTaskRunner } from '../tasks/runner.js';

const errorSchema = z.object({ error: z.string() });
const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((status) => [status, { description: 'Error', schema: errorSchema }]));

export const MAX_PAGE_SIZE = 200;
const paging = {
  page: z.coerce.number().int().min(1).max(1_000_000).default(1).describe('Page, from 1'),
  pageSize: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(50).describe(`Rows per page (1-${MAX_PAGE_SIZE})`),
};

const runSchema = z.object({
  id: z.string(),
  task: z.string(),
  trigger: z.enum(['Scheduler', 'Manual']),
  status: z.enum(['Running', 'Success', 'Failed']),
  message: z.string().nullable(),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  durationMs: z.number().nullable(),
});

const settingsView = z.object({
  health: healthSettingsSchema,
  storageAlerts: storageAlertSettingsSchema,
  configBackup: configBackupSettingsSchema,
  metrics: z.object({ bearerTokenSet: z.boolean() }),
  integrityCheck: integrityCheckSettingsSchema,
});

const settingsPatch = z.strictObject({
  health: healthSettingsSchema.optional(),
  storageAlerts: storageAlertSettingsSchema.optional(),
  configBackup: configBackupSettingsSchema.optional(),
  metrics: z.strictObject({ bearerToken: z.string().min(16).max(512).regex(/^[\x21-\x7e]+$/, { message: 'printable ASCII without spaces' }).nullable() }).optional(),
  integrityCheck: integrityCheckSettingsSchema.optional(),
});

const idParams = z.object({ id: z.string().min(1).max(64) });

/** What the routes reach. */
export interface ObservabilityRouteDeps {
  container: DependencyContainer;
  database: () => OrmDatabase;
  runner: () => SystemTaskRunner;
  runs: TaskRunStore;
  health: () => HealthChecker;
  alerts: () => StorageAlerts;
  settings: ObservabilitySettings;
  metrics: () => HoldfastMetrics;
  /** Who may read `/metrics` (environment part). */
  metricsAccess: MetricsAccess;
}

const TYPE_PERMISSION: Record<string, { permission: string; resource: string }> = {
  database: { permission: 'sources:read', resource: 'source' },
  storage: { permission: 'destinations:read', resource: 'destination' },
};

/** The adapter configuration's type after checking the caller may read it (404 unknown, 403 not allowed). */
async function readableAdapter(deps: ObservabilityRouteDeps, auth: AuthContext | null, id: string, types: string[]): Promise<{ type: string; name: string }> {
  const [row] = (await deps.container.resolve(TOKENS.JobCatalog).listAdapterConfigs?.({ ids: [id] })) ?? [];
  if (!row || !types.includes(row.type)) throw new NotFoundError('Adapter configuration not found');
  const rule = TYPE_PERMISSION[row.type]!;
  const allowed = !auth
    ? false
    : deps.container.isRegistered(TOKENS.AccessPolicy, true)
      ? await deps.container.resolve(TOKENS.AccessPolicy).isAllowed(auth, rule.permission, { type: rule.resource, id })
      : auth.isSuperAdmin || auth.permissions.includes(rule.permission);
  if (!allowed) throw new ForbiddenError(rule.permission);
  return row;
}

function view(values: ObservabilitySettingsValues): z.output<typeof settingsView> {
  return {
    health: values.health,
    storageAlerts: values.storageAlerts,
    configBackup: values.configBackup,
    metrics: { bearerTokenSet: values.metrics.bearerTokenSha256 !== null },
    integrityCheck: values.integrityCheck,
  };
}

/** The routes of the observability plugin. */
export function observabilityRoutes(deps: ObservabilityRouteDeps): RouteDefinition[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/settings/system-tasks/:task/run',
      summary: 'Run a system task now (HEALTH_CHECK, CLEAN_OLD_LOGS, UPDATE_DB_VERSIONS, REFRESH_STORAGE_STATS, CONFIG_BACKUP, INTEGRITY_CHECK)',
      tags: ['settings'],
      access: { permission: 'settings:write' },
      request: { params: z.object({ task: z.string().min(1).max(64) }) },
      responses: { 202: { description: 'Started; poll the runs route for the outcome', schema: runSchema }, ...errors(400, 401, 403, 404, 409) },
      handler: async (request) => {
        const { run } = await deps.runner().runNow(request.params.task);
        return routeResult({ status: 202, body: run });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/settings/system-tasks/runs',
      summary: 'Recorded system task runs, newest first',
      tags: ['settings'],
      access: { permission: 'settings:read' },
      request: {
        query: z.object({
          ...paging,
          task: z.string().min(1).max(64).optional(),
          status: z.enum(['Running', 'Success', 'Failed']).optional(),
        }),
      },
      responses: { 200: { description: 'One page of runs', schema: z.object({ runs: z.array(runSchema), total: z.number(), page: z.number(), pageSize: z.number() }) }, ...errors(400, 401, 403) },
      handler: async (request) => {
        const { runs, total } = await deps.runs.page(request.query);
        return { runs, total, page: request.query.page, pageSize: request.query.pageSize };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/adapters/:id/health',
      summary: 'Health check history of a source or destination (HealthCheckLog), newest first, with its current status',
      tags: ['adapters'],
      access: { anyPermission: ['sources:read', 'destinations:read'] },
      request: { params: idParams, query: z.object(paging) },
      responses: {
        200: {
          description: 'One page of the history',
          schema: z.object({
            entries: z.array(z.object({ id: z.string(), adapterConfigId: z.string(), status: z.string(), latencyMs: z.number(), error: z.string().nullable(), createdAt: z.string() })),
            total: z.number(),
            page: z.number(),
            pageSize: z.number(),
          }),
        },
        ...errors(400, 401, 403, 404),
      },
      handler: async (request) => {
        await readableAdapter(deps, request.auth, request.params.id, ['database', 'storage']);
        const { entries, total } = await deps.health().history(request.params.id, request.query.page, request.query.pageSize);
        return { entries, total, page: request.query.page, pageSize: request.query.pageSize };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/adapters/:id/storage-usage',
      summary: 'Usage over time of a storage destination (StorageSnapshot rows), oldest first',
      tags: ['adapters'],
      access: { permission: 'destinations:read', scope: { resource: 'destination', param: 'id' } },
      request: {
        params: idParams,
        query: z.object({
          from: z.iso.datetime({ offset: true }).optional().describe('Start (ISO 8601; default 30 days ago)'),
          to: z.iso.datetime({ offset: true }).optional().describe('End (ISO 8601; default now)'),
          limit: z.coerce.number().int().min(1).max(5000).default(1000),
        }),
      },
      responses: {
        200: { description: 'Snapshots', schema: z.object({ adapterConfigId: z.string(), name: z.string(), snapshots: z.array(z.object({ size: z.number(), count: z.number(), createdAt: z.string() })) }) },
        ...errors(400, 401, 403, 404),
      },
      handler: async (request) => {
        const row = await readableAdapter(deps, request.auth, request.params.id, ['storage']);
        const to = request.query.to ? new Date(request.query.to) : new Date();
        const from = request.query.from ? new Date(request.query.from) : new Date(to.getTime() - 30 * 86_400_000);
        if (from > to) throw new ValidationError('Invalid request: query.from must not be after query.to', [{ path: 'query.from', message: 'after query.to' }]);
        return { adapterConfigId: request.params.id, name: row.name, snapshots: await deps.alerts().usage(request.params.id, from, to, request.query.limit) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/settings/observability',
      summary: 'Health thresholds, storage alerts, configuration self-backup, metrics and scheduled integrity check settings',
      tags: ['settings'],
      access: { permission: 'settings:read' },
      responses: { 200: { description: 'Settings', schema: settingsView }, ...errors(401, 403) },
      handler: async () => view(await deps.settings.all()),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/settings/observability',
      summary: 'Change observability settings; each section replaces the stored one',
      tags: ['settings'],
      access: { permission: 'settings:write' },
      request: { body: settingsPatch },
      responses: { 200: { description: 'Settings after the change', schema: settingsView }, ...errors(400, 401, 403) },
      handler: async (request) => {
        const { metrics, ...rest } = request.body;
        const changes: Partial<ObservabilitySettingsValues> = { ...rest };
        if (metrics) changes.metrics = { bearerTokenSha256: metrics.bearerToken === null ? null : tokenHash(metrics.bearerToken) };
        if (rest.configBackup?.enabled && !rest.configBackup.storageId) {
          throw new ValidationError('Invalid request: body.configBackup.storageId: required while the backup is enabled', [{ path: 'body.configBackup.storageId', message: 'required when enabled' }]);
        }
        await deps.settings.set(changes);
        return view(await deps.settings.all());
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/metrics',
      summary: 'Prometheus metrics (text exposition format): loopback callers only unless HOLDFAST_METRICS_ALLOW or a bearer token says otherwise',
      tags: ['system'],
      access: { public: true },
      responses: { 200: { description: 'Metrics', contentType: 'text/plain; version=0.0.4' }, ...errors(401, 403) },
      handler: async (request) => {
        const { bearerTokenSha256 } = await deps.settings.get('metrics');
        const authorization = typeof request.headers.authorization === 'string' ? request.headers.authorization : undefined;
        const verdict = metricsVerdict(deps.metricsAccess, bearerTokenSha256, request.ip, authorization);
        if (verdict === 'address-refused') {
          throw new ForbiddenError('Metrics are not served to this address: add it to HOLDFAST_METRICS_ALLOW or set a metrics bearer token');
        }
        if (verdict === 'token-required') throw new UnauthorizedError('A valid metrics bearer token is required');
        const metrics = deps.metrics();
        return routeResult({ status: 200, headers: { 'content-type': metrics.contentType, 'cache-control': 'no-store' }, body: await metrics.render() });
      },
    }),
  ];
}
