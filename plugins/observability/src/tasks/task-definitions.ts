import type { OrmDatabase } from '@holdfast/orm-port';
import {
  NotFoundError,
  ValidationError,
  type AuditWriter,
  type KernelLogger,
  type SettingsReader,
  type SystemTaskScheduleRecord,
  type SystemTaskSchedules,
} from '@holdfast/kernel';
import { CronTime } from 'cron';
import { z } from 'zod';
import { SystemTaskScheduleEntity, type SystemTaskScheduleRow } from '../store/entities.js';

/** The system tasks of SPEC whose schedules live in `system_task_schedules`, with their default schedules. */
export const SYSTEM_TASK_DEFAULTS = {
  HEALTH_CHECK: '*/15 * * * *',
  CLEAN_OLD_LOGS: '30 3 * * *',
  UPDATE_DB_VERSIONS: '0 4 * * *',
  REFRESH_STORAGE_STATS: '0 * * * *',
} as const;

export const SYSTEM_TASKS = Object.keys(SYSTEM_TASK_DEFAULTS) as Array<keyof typeof SYSTEM_TASK_DEFAULTS>;

export const systemTaskSchema = z.object({
  task: z.enum(SYSTEM_TASKS),
  enabled: z.boolean(),
  schedule: z.string(),
  lastRunAt: z.string().describe('ISO 8601 timestamp (UTC)').nullable(),
  nextRunAt: z.string().describe('ISO 8601 timestamp (UTC)').nullable(),
});

/** One task change (POST). */
export const systemTaskPatch = z.strictObject({
  task: z.enum(SYSTEM_TASKS),
  enabled: z.boolean().optional(),
  schedule: z.string().min(1).max(255).optional(),
});

/** Several task changes at once (PUT). */
export const systemTasksPatch = z.strictObject({ tasks: z.array(systemTaskPatch).min(1).max(SYSTEM_TASKS.length) });

export type SystemTaskView = z.output<typeof systemTaskSchema>;

/** Who changed the schedules, for the audit log. */
export interface TaskActor {
  userId: string | null;
  ipAddress?: string | null;
  userAgent?: string | null;
}

/**
 * Why a 5-part cron expression (minute hour day-of-month month day-of-week) is refused, or null. The `cron` package
 * also accepts a leading seconds field; Holdfast schedules are minute-granular, so exactly five fields are required.
 */
export function cronProblem(expression: string): string | null {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 || fields[0] === '') {
    return `must have 5 space-separated fields (minute hour day-of-month month day-of-week), got ${fields[0] === '' ? 0 : fields.length}`;
  }
  try {
    // Parsed in UTC: the zone does not change what is valid, and without one `cron` loads ICU's date data.
    new CronTime(fields.join(' '), 'UTC');
    return null;
  } catch (error) {
    return `is not a valid cron expression: ${error instanceof Error ? error.message : 'unparseable'}`;
  }
}

/** Next run of a cron expression in `zone`, or null when it cannot be computed. */
export function nextRunOf(schedule: string, zone: string): Date | null {
  try {
    return new CronTime(schedule, zone).sendAt().toJSDate();
  } catch {
    return null;
  }
}

function iso(value: Date | string | number | null | undefined): string | null {
  return value === null || value === undefined ? null : new Date(value).toISOString();
}

function isKnownTask(task: string): task is (typeof SYSTEM_TASKS)[number] {
  return (SYSTEM_TASKS as string[]).includes(task);
}

/**
 * Stores and validates the system task schedules (`system_task_schedules`): seeds the defaults, lists and changes
 * them for `/api/settings/system-tasks`, and serves them to the catalog's export and import as
 * `TOKENS.SystemTaskSchedules`.
 */
export class SystemTaskDefinitions implements SystemTaskSchedules {
  constructor(
    private readonly deps: {
      database: () => OrmDatabase;
      settings: () => SettingsReader | undefined;
      audit: () => AuditWriter | undefined;
      logger: KernelLogger;
    },
  ) {}

  private async zone(): Promise<string> {
    return (await this.deps.settings()?.get<string>('systemTimezone')) || 'UTC';
  }

  /** Creates the rows of tasks that have none yet (idempotent; runs at start). */
  async seed(): Promise<void> {
    const em = this.deps.database().em();
    const zone = await this.zone();
    for (const task of SYSTEM_TASKS) {
      if (await em.findOne(SystemTaskScheduleEntity, { task })) continue;
      const schedule = SYSTEM_TASK_DEFAULTS[task];
      em.create(SystemTaskScheduleEntity, { task, enabled: true, schedule, lastRunAt: null, nextRunAt: nextRunOf(schedule, zone), updatedAt: new Date() });
    }
    await em.flush();
  }

  private view(row: SystemTaskScheduleRow): SystemTaskView {
    return {
      task: row.task as (typeof SYSTEM_TASKS)[number],
      enabled: row.enabled,
      schedule: row.schedule,
      lastRunAt: iso(row.lastRunAt),
      nextRunAt: row.enabled ? iso(row.nextRunAt) : null,
    };
  }

  private async rows(): Promise<SystemTaskScheduleRow[]> {
    return this.deps.database().em().find(SystemTaskScheduleEntity, {}, { orderBy: { task: 'asc' } });
  }

  /** The tasks as `GET /api/settings/system-tasks` answers them. */
  async views(): Promise<SystemTaskView[]> {
    return (await this.rows()).map((row) => this.view(row));
  }

  /** Schedules the runner plans (its own tasks are added by the plugin). */
  async schedules(): Promise<Array<{ task: string; enabled: boolean; schedule: string }>> {
    return (await this.rows()).map((row) => ({ task: row.task, enabled: row.enabled, schedule: row.schedule }));
  }

  /** Applies task changes in one transaction; every schedule is checked first so nothing is half-applied. */
  async update(patches: Array<z.output<typeof systemTaskPatch>>, actor: TaskActor): Promise<SystemTaskView[]> {
    patches.forEach((patch, index) => {
      const problem = patch.schedule === undefined ? null : cronProblem(patch.schedule);
      const path = `body.tasks[${index}].schedule`;
      if (problem) throw new ValidationError(`Invalid request: ${path}: ${problem}`, [{ path, message: problem }]);
    });
    const zone = await this.zone();
    await this.deps.database().em().transactional(async (em) => {
      for (const patch of patches) {
        const row = await em.findOne(SystemTaskScheduleEntity, { task: patch.task });
        if (!row) throw new NotFoundError(`System task ${patch.task} not found`);
        const schedule = patch.schedule?.trim().split(/\s+/).join(' ') ?? row.schedule;
        em.assign(row, { enabled: patch.enabled ?? row.enabled, schedule, nextRunAt: nextRunOf(schedule, zone), updatedAt: new Date() });
      }
    });
    await this.audit(actor, { tasks: patches.map((patch) => patch.task) });
    return this.views();
  }

  /** `TOKENS.SystemTaskSchedules`: what the catalog's export carries. */
  async list(): Promise<SystemTaskScheduleRecord[]> {
    return (await this.rows()).map((row) => ({ task: row.task, enabled: row.enabled, schedule: row.schedule, lastRunAt: iso(row.lastRunAt) }));
  }

  /** `TOKENS.SystemTaskSchedules`: an import's schedules; unknown tasks and invalid schedules are skipped. */
  async restore(tasks: ReadonlyArray<Pick<SystemTaskScheduleRecord, 'task' | 'enabled' | 'schedule'>>): Promise<string[]> {
    const zone = await this.zone();
    const applied: string[] = [];
    const em = this.deps.database().em();
    for (const task of tasks) {
      if (!isKnownTask(task.task) || cronProblem(task.schedule)) continue;
      const row = await em.findOne(SystemTaskScheduleEntity, { task: task.task });
      if (!row) continue;
      em.assign(row, { enabled: task.enabled, schedule: task.schedule, nextRunAt: nextRunOf(task.schedule, zone), updatedAt: new Date() });
      applied.push(task.task);
    }
    await em.flush();
    return applied;
  }

  /** Like the catalog's audit trail: never throws, and without an audit writer the entry goes to the log. */
  private async audit(actor: TaskActor, details: Record<string, unknown>): Promise<void> {
    const entry = { userId: actor.userId, action: 'UPDATE', resource: 'system-task', resourceId: null, details, ipAddress: actor.ipAddress ?? null, userAgent: actor.userAgent ?? null };
    try {
      const writer = this.deps.audit();
      if (writer) await writer.write(entry);
      else this.deps.logger.info({ audit: entry }, 'audit entry (no audit writer registered)');
    } catch (error) {
      this.deps.logger.warn({ action: entry.action, resource: entry.resource, err: (error as Error).message }, 'audit entry could not be written');
    }
  }
}
