import { ValidationError } from '@holdfast/kernel';
import { z } from 'zod';
import { SchedulePresetEntity, type SchedulePresetRow } from '../entities/templates.js';
import { cronProblem } from '../shared/cron.js';
import { iso } from '../shared/deps.js';
import { jobsWhere } from '../shared/references.js';
import { descriptionField, nameField, timestamp } from '../shared/schemas.js';
import type { TemplateKind } from './template-store.js';

const schedule = z.string().min(1).max(255).describe('5-part cron expression');

export const createSchedulePresetBody = z.strictObject({ name: nameField, description: descriptionField, schedule });
export const updateSchedulePresetBody = z.strictObject({
  name: nameField.optional(),
  description: descriptionField,
  schedule: schedule.optional(),
});

export const schedulePresetSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  schedule: z.string(),
  isSystem: z.boolean(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

/** Throws a 400 naming `path` when `expression` is not a valid 5-part cron expression. */
export function assertCron(expression: string, path: string): void {
  const problem = cronProblem(expression);
  if (problem) throw new ValidationError(`Invalid request: ${path}: ${problem}`, [{ path, message: problem }]);
}

/** Schedule presets: the kind-specific part of the template rules. */
export function schedulePresetKind(): TemplateKind<SchedulePresetRow, z.output<typeof schedulePresetSchema>, { schedule?: string }> {
  return {
    entity: SchedulePresetEntity,
    label: 'A schedule preset',
    resource: 'schedule-preset',
    hasDefault: false,
    hasSystem: true,
    async prepare(fields) {
      if (fields.schedule === undefined) throw new ValidationError('Invalid request: body.schedule: required', [{ path: 'body.schedule', message: 'required' }]);
      assertCron(fields.schedule, 'body.schedule');
      return { schedule: fields.schedule.trim().split(/\s+/).join(' ') };
    },
    view: (row) => ({
      id: row.id,
      name: row.name,
      description: row.description ?? null,
      schedule: row.schedule,
      isSystem: row.isSystem,
      createdAt: iso(row.createdAt)!,
      updatedAt: iso(row.updatedAt)!,
    }),
    usedBy: (em, id) => jobsWhere(em, 'schedulePresetId', id),
  };
}
