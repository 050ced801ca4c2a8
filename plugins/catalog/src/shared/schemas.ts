import { lineText, routeResult } from '@holdfast/kernel';
import { z } from 'zod';

/** Longest name the catalog accepts (the columns are varchar 255). */
export const NAME_MAX = 255;

/** Path parameter `:id`. */
export const idParams = z.object({ id: z.string().min(1).max(64).describe('Record id') });

/** A display name: trimmed, 1..255 characters, single-line (no control characters, issue 10.4). */
export const nameField = lineText({ max: NAME_MAX }).trim().min(1, 'must not be empty');

/** An optional free-text description. */
export const descriptionField = z.string().max(4000).nullable().optional();

/** A reference to another record by id. */
export const refId = lineText({ min: 1, max: 64 });

/** The body of every error response. */
export const errorSchema = z.object({ error: z.string(), issues: z.unknown().optional(), details: z.unknown().optional() });

/** ISO 8601 timestamp in responses. */
export const timestamp = z.string().describe('ISO 8601 timestamp (UTC)');

/** A record listing the jobs that block a delete (409 details). */
export const jobRefSchema = z.object({ id: z.string(), name: z.string() });

/** Standard error responses of a mutating route. */
export function errorResponses(...statuses: number[]): Record<number, { description: string; schema: z.ZodType }> {
  const descriptions: Record<number, string> = {
    400: 'Invalid request',
    401: 'Not authenticated',
    403: 'Missing permission or read-only record',
    404: 'Not found',
    409: 'Conflict: name taken or record in use',
    422: 'agentId names no agent a source can run on (unknown, revoked, or set on a destination or channel), or the source is in a point-in-time mode and its server cannot serve it, or could not be checked (the message names every problem; docs/pitr.md). Nothing is saved',
  };
  return Object.fromEntries(statuses.map((status) => [status, { description: descriptions[status] ?? 'Error', schema: errorSchema }]));
}

/** `{ success: true }` answer of deletes. */
export const deletedSchema = z.object({ success: z.boolean() });

/** A 201 answer with a JSON body. */
export function created(body: unknown) {
  return routeResult({ status: 201, body });
}
