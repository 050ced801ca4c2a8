import { NotFoundError, type SettingsReader } from '@holdfast/kernel';
import { CronTime } from 'cron';
import { z } from 'zod';
import { SystemTaskEntity, type SystemTaskRow } from '../entities/jobs.js';
import { iso, type Actor, type CatalogDeps } from '../shared/deps.js';
import { timestamp } from '../shared/schemas.js';
import { assertCron } from '../templates/schedule-presets.js';

/** System tasks (SPEC) with their default schedules; the runner that executes them comes later. */
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
  lastRunAt: timestamp.nullable(),
  nextRunAt: timestamp.nullable(),
});

/** One task change (POST). */
export const systemTaskPatch = z.strictObject({
  task: z.enum(SYSTEM_TASKS),
  enabled: z.boolean().optional(),
  schedule: z.string().min(1).max(255).optional(),
});

/** Several task changes at once (PUT). */
export const systemTasksPatch = z.strictObject({ tasks: z.array(systemTaskPatch).min(1).max(SYSTEM_TASKS.length) });

/** Next run of a cron expression in `zone`, or null when it cannot be computed. */
export function nextRunOf(schedule: string, zone: string): Date | null {
  try {
    return new CronTime(schedule, zone).sendAt().toJSDate();
  } catch {
    return null;
  }
}

/** Stores and validates system task schedules. */
export class SystemTaskService {
  constructor(
    private readonly deps: CatalogDeps,
    private readonly settings: SettingsReader,
  ) {}

  /** Creates the rows of tasks that have none yet (idempotent; runs at start). */
  async seed(): Promise<void> {
    const em = this.deps.em();
    const zone = await this.settings.get<string>('systemTimezone');
    for (const task of SYSTEM_TASKS) {
      if (await em.findOne(SystemTaskEntity, { task })) continue;
      const schedule = SYSTEM_TASK_DEFAULTS[task];
      em.create(SystemTaskEntity, { task, enabled: true, schedule, lastRunAt: null, nextRunAt: nextRunOf(schedule, zone), updatedAt: new Date() });
    }
    await em.flush();
  }

  view(row: SystemTaskRow): z.output<typeof systemTaskSchema> {
    return {
      task: row.task as (typeof SYSTEM_TASKS)[number],
      enabled: row.enabled,
      schedule: row.schedule,
      lastRunAt: iso(row.lastRunAt),
      nextRunAt: row.enabled ? iso(row.nextRunAt) : null,
    };
  }

  async list(): Promise<Array<z.output<typeof systemTaskSchema>>> {
    const rows = await this.deps.em().find(SystemTaskEntity, {}, { orderBy: { task: 'asc' } });
    return rows.map((row) => this.view(row));
  }

  /** Applies task changes in one transaction; every schedule is checked first so nothing is half-applied. */
  async update(patches: Array<z.output<typeof systemTaskPatch>>, actor: Actor): Promise<Array<z.output<typeof systemTaskSchema>>> {
    patches.forEach((patch, index) => patch.schedule !== undefined && assertCron(patch.schedule, `body.tasks[${index}].schedule`));
    const zone = await this.settings.get<string>('systemTimezone');
    await this.deps.em().transactional(async (em) => {
      for (const patch of patches) {
        const row = await em.findOne(SystemTaskEntity, { task: patch.task });
        if (!row) throw new NotFoundError(`System task ${patch.task} not found`);
        const schedule = patch.schedule?.trim().split(/\s+/).join(' ') ?? row.schedule;
        em.assign(row, { enabled: patch.enabled ?? row.enabled, schedule, nextRunAt: nextRunOf(schedule, zone), updatedAt: new Date() });
      }
    });
    await this.deps.audit.record(actor, 'UPDATE', 'system-task', null, { tasks: patches.map((patch) => patch.task) });
    return this.list();
  }
}
