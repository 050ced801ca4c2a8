import { lineText } from '@holdfast/kernel';
import { z } from 'zod';

/** Upper bound of a byte budget (1 PiB): a guard against typos, not a real limit. */
const MAX_BYTE_BUDGET = 2 ** 50;

/** Body of `POST /api/integrity-checks`: one job, one destination or everything, optionally within a byte budget. */
export const integrityRequestSchema = z
  .strictObject({
    jobId: z.string().min(1).max(64).optional().describe('Check only the backups of this job (on its destinations)'),
    storageId: z.string().min(1).max(64).optional().describe('Check only the backups on this storage destination'),
    byteBudget: z
      .int()
      .min(1)
      .max(MAX_BYTE_BUDGET)
      .nullable()
      .optional()
      .describe('Stop after reading about this many bytes; the next budgeted run of the same scope continues where this one stopped'),
  })
  .refine((body) => !(body.jobId && body.storageId), { message: 'give either jobId or storageId, not both', path: ['storageId'] });

/** A stored integrity check request. */
export type IntegrityRequest = z.output<typeof integrityRequestSchema>;

/** Body of `POST /api/storage/:id/verify`. */
export const verificationBodySchema = z.strictObject({
  file: lineText({ min: 1, max: 1024 }).describe('Path of the backup within the storage'),
});

/** A stored verification request. */
export type VerificationRequest = z.output<typeof verificationBodySchema> & { storageId: string };

/** The scope label of an integrity request, as logs, metadata and the event name it. */
export function integrityScope(request: IntegrityRequest): string {
  if (request.jobId) return `job:${request.jobId}`;
  if (request.storageId) return `storage:${request.storageId}`;
  return 'all';
}
