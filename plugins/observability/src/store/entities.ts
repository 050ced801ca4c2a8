import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** One run of a system task (start, end, outcome, message); written by the runner, listed newest first. */
export const SystemTaskRunEntity = defineEntity({
  name: 'SystemTaskRun',
  tableName: 'system_task_runs',
  properties: {
    id: p.string().primary().length(36),
    task: p.string().length(64),
    /** `Scheduler` (its cron fired) or `Manual` (run-now). */
    trigger: p.string().length(16),
    /** `Running`, `Success`, `Failed`. */
    status: p.string().length(16),
    message: p.text().nullable(),
    startedAt: p.datetime(),
    endedAt: p.datetime().nullable(),
  },
});

/** A stored task run. */
export type SystemTaskRunRow = InferEntity<typeof SystemTaskRunEntity>;

/** SPEC "HealthCheckLog": one row per health check of one source or destination. */
export const HealthCheckLogEntity = defineEntity({
  name: 'HealthCheckLog',
  tableName: 'health_check_logs',
  properties: {
    id: p.string().primary().length(36),
    adapterConfigId: p.string().length(36),
    status: p.string().length(16),
    latencyMs: p.integer(),
    error: p.text().nullable(),
    createdAt: p.datetime(),
  },
});

/** A stored health check row. */
export type HealthCheckLogRow = InferEntity<typeof HealthCheckLogEntity>;

/** The observability settings (one JSON document per key; see `settings.ts`). */
export const ObservabilitySettingEntity = defineEntity({
  name: 'ObservabilitySetting',
  tableName: 'observability_settings',
  properties: {
    key: p.string().primary().length(64),
    value: p.text(),
    updatedAt: p.datetime(),
  },
});

/** Remembers which storage alerts are active so each fires once per episode, not on every refresh. */
export const StorageAlertStateEntity = defineEntity({
  name: 'StorageAlertState',
  tableName: 'storage_alert_states',
  properties: {
    /** `<alert>:<adapterConfigId>`. */
    key: p.string().primary().length(128),
    raisedAt: p.datetime(),
  },
});

/** A system task's stored schedule (SPEC "SystemTask"); the table is created by `system-task-schedules-migration.ts`. */
export const SystemTaskScheduleEntity = defineEntity({
  name: 'SystemTaskSchedule',
  tableName: 'system_task_schedules',
  properties: {
    task: p.string().primary().length(64),
    enabled: p.boolean().default(true),
    schedule: p.string().length(255),
    lastRunAt: p.datetime().nullable(),
    nextRunAt: p.datetime().nullable(),
    updatedAt: p.datetime(),
  },
});

/** A stored task schedule. */
export type SystemTaskScheduleRow = InferEntity<typeof SystemTaskScheduleEntity>;
