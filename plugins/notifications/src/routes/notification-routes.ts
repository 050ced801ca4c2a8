import { defineRoute, NotFoundError, routeResult, ValidationError, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import type { ChannelSender } from '../dispatch/channel-sender.js';
import type { NotificationDispatcher } from '../dispatch/dispatcher.js';
import { COLORS } from '../dispatch/messages.js';
import type { NotificationLogStore } from '../log/notification-log.js';

const errorBody = z.object({ error: z.string() });
const id = z.string().min(1).max(64);

/** Decision (SPEC: not shown): pages default to 50 entries and hold at most 200. */
export const LOG_PAGE_SIZE = { default: 50, max: 200 } as const;

const logQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(LOG_PAGE_SIZE.max).default(LOG_PAGE_SIZE.default),
  eventType: z.string().min(1).max(64).optional(),
  status: z.enum(['Success', 'Failed']).optional(),
  channelId: id.optional(),
  executionId: id.optional(),
});

const logEntry = z.object({
  id: z.string(),
  eventType: z.string(),
  channelId: z.string().nullable(),
  channelName: z.string(),
  adapterId: z.string(),
  status: z.enum(['Success', 'Failed']),
  title: z.string(),
  message: z.string(),
  fields: z.array(z.object({ name: z.string(), value: z.string(), inline: z.boolean().optional() })),
  color: z.string().nullable(),
  renderedHtml: z.string().nullable(),
  renderedPayload: z.string().nullable(),
  error: z.string().nullable(),
  executionId: z.string().nullable(),
  sentAt: z.string(),
});

const testBody = z
  .strictObject({
    channelIds: z.array(id).min(1).max(100).optional().describe('Channels to test; default: the event-level or global channels'),
    eventType: z.string().min(1).max(64).optional().describe('Test the channels configured for this system event'),
  })
  .default({});

const testResult = z.object({ channelId: z.string(), channelName: z.string(), success: z.boolean(), error: z.string().optional() });

/** `GET /api/notifications/log` and `POST /api/notifications/test`. */
export function notificationRoutes(deps: { store: () => NotificationLogStore; dispatcher: () => NotificationDispatcher; sender: () => ChannelSender }): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/notifications/log',
      summary: 'Notification delivery attempts, newest first, with paging and filters',
      tags: ['notifications'],
      access: { permission: 'notifications:read' },
      request: { query: logQuery },
      responses: {
        200: { description: 'One page of entries and the total matching the filters.', schema: z.object({ entries: z.array(logEntry), total: z.number(), page: z.number(), pageSize: z.number() }) },
        400: { description: 'Invalid paging or filter.', schema: errorBody },
      },
      handler: async ({ query }) => {
        const { entries, total } = await deps.store().list(query);
        return { entries, total, page: query.page, pageSize: query.pageSize };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/notifications/test',
      summary: 'Send a test notification to channels and report each result (SPEC rule 7)',
      tags: ['notifications'],
      access: { permission: 'notifications:write' },
      request: { body: testBody },
      responses: {
        200: { description: 'Sent to at least one channel; `warning` names the channels that failed.', schema: z.object({ success: z.literal(true), message: z.string(), warning: z.string().optional(), results: z.array(testResult) }) },
        400: { description: 'No channel to test.', schema: errorBody },
        404: { description: 'A named channel does not exist or is not a notification channel.', schema: errorBody },
        502: { description: 'Every channel failed.', schema: errorBody.extend({ results: z.array(testResult) }) },
      },
      handler: async ({ body }) => {
        const { channels, missing } = await deps.dispatcher().testTargets(body);
        if (body.channelIds && missing.length > 0) throw new NotFoundError(`Notification channel not found: ${missing.join(', ')}`);
        if (channels.length === 0) throw new ValidationError('No notification channels to test: configure global or event channels, or name channelIds');
        const label = body.eventType ?? 'test';
        const payload = {
          title: 'Test notification',
          message: `This is a test notification from Holdfast${body.eventType ? ` for the event ${body.eventType}` : ''}.`,
          fields: [{ name: 'Event', value: label, inline: true }],
          color: COLORS.info,
          success: true,
        };
        const results = (await Promise.all(channels.map((channel) => deps.sender().send(channel, 'test', payload)))).map((result) => ({
          channelId: result.channelId,
          channelName: result.channelName,
          success: result.success,
          ...(result.error ? { error: result.error } : {}),
        }));
        const failed = results.filter((result) => !result.success);
        const describe = (list: typeof results) => list.map((result) => `${result.channelName} (${result.error ?? 'failed'})`).join('; ');
        if (failed.length === results.length) {
          return routeResult({ status: 502, body: { error: `The test notification failed on every channel: ${describe(failed)}`, results } });
        }
        const sent = results.length - failed.length;
        return {
          success: true as const,
          message: `Test notification sent to ${sent} of ${results.length} channel(s)`,
          ...(failed.length > 0 ? { warning: `Some channels failed: ${describe(failed)}` } : {}),
          results,
        };
      },
    }),
  ];
}
