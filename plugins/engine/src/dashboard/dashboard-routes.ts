import { defineRoute, ValidationError, type RouteDefinition, type SettingsReader } from '@holdfast/kernel';
import { z } from 'zod';
import type { JobDirectory } from '../scheduler/job-directory.js';
import { isValidSchedule } from '../scheduler/cron-schedule.js';
import type { DashboardFigures } from './dashboard-figures.js';
import type { StorageStats } from './storage-stats.js';
import { addDays, dayOf, isCalendarDay } from './zoned-days.js';

/** Longest calendar range one request may ask for. */
export const MAX_CALENDAR_DAYS = 3660;
/** Calendar range without `from`: the last 365 days including today. */
export const DEFAULT_CALENDAR_DAYS = 365;

const dayParam = z.string().refine(isCalendarDay, { message: 'must be a date YYYY-MM-DD' }).optional();

const statsSchema = z.object({
  success: z.literal(true),
  data: z.object({
    totalJobs: z.int(),
    activeSchedules: z.int().describe('Enabled jobs with a valid schedule'),
    totalSnapshots: z.int().describe('Backup files on all destinations (sidecars excluded), from the storage statistics cache'),
    totalStorageBytes: z.int(),
    successRate30d: z.number().describe('Percent of backups finished in 30 days that succeeded; 0 without any'),
    success24h: z.int(),
    failed24h: z.int(),
    storageUpdatedAt: z.string().nullable().describe('When the storage statistics were last refreshed; null before the first'),
  }),
});

const calendarSchema = z.object({
  success: z.literal(true),
  data: z.object({
    from: z.string(),
    to: z.string(),
    timezone: z.string(),
    days: z.array(
      z.object({
        date: z.string(),
        success: z.int(),
        partial: z.int(),
        failed: z.int(),
        outcome: z.enum(['success', 'partial', 'failed', 'none']).describe('Worst outcome of the day'),
      }),
    ),
  }),
});

/** What the dashboard routes need. */
export interface DashboardDeps {
  figures: DashboardFigures;
  storage: StorageStats;
  jobs: () => JobDirectory;
  settings: () => SettingsReader;
}

/** `GET /api/dashboard/stats` and `GET /api/dashboard/calendar`. */
export function dashboardRoutes(deps: DashboardDeps): RouteDefinition[] {
  const zoneOf = async () => (await deps.settings().get<string>('systemTimezone')) || 'UTC';
  return [
    defineRoute({
      method: 'GET',
      path: '/api/dashboard/stats',
      summary: 'Job, schedule, storage and 24-hour/30-day backup figures',
      tags: ['dashboard'],
      access: { permission: 'dashboard:read' },
      responses: { 200: { description: 'The figures.', schema: statsSchema } },
      handler: async () => {
        const now = new Date();
        const [jobs, storage, rate, last24h] = await Promise.all([
          deps.jobs().scheduledJobs(),
          deps.storage.totals(),
          deps.figures.successRate30d(now),
          deps.figures.finishedSince(new Date(now.getTime() - 24 * 60 * 60 * 1000)),
        ]);
        return {
          success: true as const,
          data: {
            totalJobs: jobs.length,
            activeSchedules: jobs.filter((job) => job.enabled && isValidSchedule(job.schedule)).length,
            totalSnapshots: storage.totalSnapshots,
            totalStorageBytes: storage.totalStorageBytes,
            successRate30d: rate,
            success24h: last24h.success,
            failed24h: last24h.failed,
            storageUpdatedAt: storage.storageUpdatedAt,
          },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/dashboard/calendar',
      summary: 'Backup outcomes per day in the system time zone (heat map)',
      tags: ['dashboard'],
      access: { permission: 'dashboard:read' },
      request: { query: z.object({ from: dayParam, to: dayParam }) },
      responses: {
        200: { description: `Every day from..to; default the last ${DEFAULT_CALENDAR_DAYS} days.`, schema: calendarSchema },
        400: { description: 'from/to are not dates, from is after to, or the range is too long.', schema: z.object({ error: z.string() }) },
      },
      handler: async ({ query }) => {
        const zone = await zoneOf();
        const to = query.to ?? dayOf(new Date(), zone);
        const from = query.from ?? addDays(to, -(DEFAULT_CALENDAR_DAYS - 1));
        if (from > to) throw new ValidationError(`Invalid request: query.from (${from}) is after query.to (${to})`, [{ path: 'query.from', message: 'must not be after to' }]);
        if (addDays(from, MAX_CALENDAR_DAYS - 1) < to) {
          throw new ValidationError(`Invalid request: the range may span at most ${MAX_CALENDAR_DAYS} days`, [{ path: 'query.from', message: `range longer than ${MAX_CALENDAR_DAYS} days` }]);
        }
        return { success: true as const, data: { from, to, timezone: zone, days: await deps.figures.calendar(from, to, zone) } };
      },
    }),
  ];
}
