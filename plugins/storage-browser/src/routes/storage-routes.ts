import { defineRoute, lineText, routeResult, runProtectedAction, type ProtectedActionGuard, type RouteDefinition, type RouteRequest, ValidationError } from '@holdfast/kernel';
import { create as contentDisposition } from 'content-disposition';
import { z } from 'zod';
import type { AuditActor, StorageBrowser } from '../storage-browser.js';

const errorBody = z.object({ error: z.string() });
const idParams = z.object({ id: z.string().min(1).max(64) });
const fileField = lineText({ min: 1, max: 1024 }).describe('Path of the backup within the storage');
const destinationScope = { resource: 'destination', param: 'id' } as const;

const fileEntry = z.object({
  path: z.string(),
  size: z.number(),
  modifiedAt: z.string(),
  createdAt: z.string().nullable(),
  locked: z.boolean(),
  jobId: z.string().nullable(),
  jobName: z.string().nullable(),
  sha256: z.string().nullable(),
  encrypted: z.boolean(),
  compression: z.string().nullable(),
  databases: z.array(z.string()),
});

/** `?refresh=true` reads the destination instead of the cache. */
const listQuery = z.object({ refresh: z.enum(['true', 'false']).default('false').transform((value) => value === 'true') });

function actorOf(request: RouteRequest): AuditActor {
  return { userId: request.auth?.userId ?? null, ipAddress: request.ip, userAgent: request.userAgent ?? null };
}

/** Header value for a download: RFC 6266 with an ASCII fallback name and the UTF-8 name in `filename*` (RFC 5987). */
export function attachmentHeader(fileName: string): string {
  return contentDisposition(fileName, { type: 'attachment' });
}

/**
 * The storage browser's routes (docs/api/storage.md). Deleting and unlocking a backup are protected actions (issue
 * 45.4): they go through `guard` (the identity plugin's, when loaded).
 */
export function storageRoutes(browser: StorageBrowser, guard: () => ProtectedActionGuard | undefined = () => undefined): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/storage/:id/files',
      summary: 'List the backup files of a storage destination, newest first',
      tags: ['storage'],
      access: { permission: 'storage:read', scope: destinationScope },
      request: { params: idParams, query: listQuery },
      responses: {
        200: { description: 'The files, newest first (sidecars are not entries).', schema: z.array(fileEntry) },
        400: { description: 'The configuration is not a storage destination.', schema: errorBody },
        404: { description: 'Storage not found.', schema: errorBody },
        502: { description: 'The destination refused our credentials.', schema: errorBody },
        503: { description: 'The destination could not be listed.', schema: errorBody },
      },
      handler: async ({ params, query, signal }) => {
        const listing = await browser.list(params.id, { refresh: query.refresh, signal });
        return routeResult({
          body: listing.files,
          headers: { 'X-Holdfast-Cache': listing.isFromCache ? 'hit' : 'miss', 'X-Holdfast-Cached-At': listing.cachedAt.toISOString() },
        });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/storage/:id/download-url',
      summary: 'Create a single-use download URL for a backup file, or one file of a seekable archive (valid 5 minutes)',
      tags: ['storage'],
      access: { permission: 'storage:download', scope: destinationScope },
      request: {
        params: idParams,
        body: z.strictObject({
          file: fileField,
          decrypt: z.boolean().default(true).describe('Decrypt an encrypted backup (compression is kept)'),
          database: z.string().min(1).max(255).optional().describe('The database to download from a multi-database dump'),
          path: lineText({ min: 1, max: 4096 })
            .optional()
            .describe('One file of a seekable archive to download alone, by its archive path as GET /api/storage/{id}/archive lists it (not with database)'),
          privateKey: z
            .string()
            .min(1)
            .max(8192)
            .optional()
            .describe(
              'A decrypted download of a backup of a public-key encryption profile: the age private key (AGE-SECRET-KEY-1..., or the age-keygen key file). Checked against the backup now (missing or wrong: 400); held in this server process\'s memory for the URL\'s 5 minutes only, never stored or logged',
            ),
        }),
      },
      responses: {
        200: {
          description: 'The URL, relative to the server.',
          schema: z.object({ success: z.literal(true), url: z.string(), expiresIn: z.string(), singleUse: z.literal(true) }),
        },
        400: { description: 'Bad input, several databases and none named, or a path that is not one file of a seekable archive.', schema: errorBody },
        404: { description: 'Storage or file not found.', schema: errorBody },
        409: { description: 'The archive, or an earlier backup of its chain, cannot be read.', schema: errorBody },
      },
      handler: async (request) => {
        const { params, body, signal } = request;
        const record = await browser.createDownloadUrl(params.id, body, actorOf(request), signal);
        return { success: true as const, url: `/api/storage/public-download?token=${record.token}`, expiresIn: '5 minutes', singleUse: true as const };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/storage/public-download',
      summary: 'Download a backup file with a download token (no authentication)',
      tags: ['storage'],
      access: { public: true },
      request: { query: z.object({ token: z.string().max(128).optional() }) },
      responses: {
        200: { description: 'The file.', contentType: 'application/octet-stream' },
        400: { description: 'No token given.', schema: errorBody },
        401: { description: 'Unknown, expired or used token.', schema: errorBody },
        500: { description: 'The file could not be read or decrypted.', schema: errorBody },
      },
      handler: async ({ query, signal }) => {
        if (!query.token) throw new ValidationError('token: a download token is required (?token=...)');
        const opened = await browser.openDownload(query.token, signal);
        const headers: Record<string, string> = {
          'Content-Type': 'application/octet-stream',
          'Content-Disposition': attachmentHeader(opened.fileName),
          'Cache-Control': 'no-store',
        };
        if (opened.size !== undefined) headers['Content-Length'] = String(opened.size);
        return routeResult({ stream: opened.stream, headers });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/storage/:id/lock',
      summary: 'Lock or unlock a backup (retention never deletes a locked backup)',
      tags: ['storage'],
      access: { permission: 'storage:delete', scope: destinationScope },
      request: { params: idParams, body: z.strictObject({ file: fileField, locked: z.boolean() }) },
      responses: {
        200: { description: 'The new state.', schema: z.object({ success: z.literal(true), file: z.string(), locked: z.boolean() }) },
        404: { description: 'Storage or file not found.', schema: errorBody },
        403: { description: 'Unlocking needs a fresh second factor (details.code SECOND_FACTOR_REQUIRED) or a key with allowBackupDeletion (API_KEY_NOT_ALLOWED).', schema: errorBody },
        409: { description: 'The backup has no sidecar to record the lock in.', schema: errorBody },
      },
      handler: async (request) => {
        const { params, body, signal } = request;
        const setLocked = () => browser.setLocked(params.id, body.file, body.locked, actorOf(request), signal);
        // Unlocking lowers the protection (retention may then delete it): a protected action; locking is not.
        if (body.locked) await setLocked();
        else await runProtectedAction(guard(), request, { kind: 'backup.unlock', resource: 'storage', resourceId: params.id, details: { file: body.file } }, setLocked);
        return { success: true as const, file: body.file, locked: body.locked };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/storage/:id/files',
      summary: 'Delete a backup file and its sidecars',
      tags: ['storage'],
      access: { permission: 'storage:delete', scope: destinationScope },
      request: { params: idParams, query: z.object({ file: fileField.optional() }), body: z.strictObject({ file: fileField }).optional() },
      responses: {
        200: { description: 'Deleted.', schema: z.object({ success: z.literal(true), file: z.string() }) },
        400: { description: 'No file named.', schema: errorBody },
        403: { description: 'Needs a fresh second factor (details.code SECOND_FACTOR_REQUIRED) or a key with allowBackupDeletion (API_KEY_NOT_ALLOWED).', schema: errorBody },
        404: { description: 'Storage or file not found.', schema: errorBody },
        409: { description: 'The backup is locked.', schema: errorBody },
      },
      handler: async (request) => {
        const { params, query, body, signal } = request;
        const file = body?.file ?? query.file;
        if (!file) throw new ValidationError('file: name the backup to delete (body or ?file=)');
        await runProtectedAction(guard(), request, { kind: 'backup.delete', resource: 'storage', resourceId: params.id, details: { file } }, () =>
          browser.delete(params.id, file, actorOf(request), signal),
        );
        return { success: true as const, file };
      },
    }),
  ];
}
