import { defineRoute, HttpError, lineText, type SettingsReader } from '@holdfast/kernel';
import { z } from 'zod';
import { settingOr } from '../run/services.js';
import { nextRunsOf } from '../scheduler/next-runs.js';

const errorBody = z.object({ error: z.string() });

/**
 * `GET /api/schedule-preview`: the next runs of a cron expression in the system timezone, for the job editor's
 * schedule picker (issue 47, item 6). Read-only and computed: it needs only the right to read jobs.
 */
export function schedulePreviewRoute(settings: () => SettingsReader) {
  return defineRoute({
    method: 'GET',
    path: '/api/schedule-preview',
    summary: 'The next runs of a 5-part cron expression in the system timezone',
    tags: ['jobs'],
    access: { permission: 'jobs:read' },
    request: {
      query: z.strictObject({
        schedule: lineText({ min: 1, max: 255 }).describe('5-part cron expression (minute hour day-of-month month day-of-week)'),
        count: z.coerce.number().int().min(1).max(20).default(5).describe('How many upcoming runs (1-20, default 5)'),
      }),
    },
    responses: {
      200: {
        description: 'The upcoming runs, in UTC and in the system timezone.',
        schema: z.object({
          success: z.literal(true),
          data: z.object({ schedule: z.string(), timezone: z.string(), runs: z.array(z.object({ at: z.string(), local: z.string() })) }),
        }),
      },
      400: { description: 'Not a 5-part cron expression.', schema: errorBody },
    },
    handler: async ({ query }) => {
      const timezone = await settingOr(settings(), 'systemTimezone', 'UTC');
      const runs = nextRunsOf(query.schedule, timezone, query.count);
      if (!runs) throw new HttpError(400, `schedule: "${query.schedule}" is not a 5-part cron expression (minute hour day-of-month month day-of-week), e.g. 0 3 * * *`);
      return { success: true as const, data: { schedule: query.schedule, timezone, runs } };
    },
  });
}
