import { defineRoute, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { actorOf } from '../shared/access.js';
import { errorResponses } from '../shared/schemas.js';
import { exportDocumentSchema } from './export-format.js';
import { importBody, importResultSchema } from './import-records.js';
import type { TransferService } from './transfer-service.js';

const TAGS = ['config'];

/** `/api/config/export` and `/api/config/import`. Both need settings:write: an export maps the whole installation. */
export function transferRoutes(service: TransferService): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/config/export',
      summary: 'Export the catalog as JSON; secrets only when encrypted with an encryption profile',
      tags: TAGS,
      access: { permission: 'settings:write' },
      request: { query: z.strictObject({ encryptionProfileId: z.string().min(1).max(64).optional() }) },
      responses: { 200: { description: 'Export document', schema: exportDocumentSchema }, ...errorResponses(400, 401, 403, 404) },
      handler: (request) => service.export(actorOf(request), request.query.encryptionProfileId),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/config/import',
      summary: 'Import an export document (dry run, strict or merge)',
      tags: TAGS,
      access: { permission: 'settings:write' },
      request: { body: importBody },
      responses: { 200: { description: 'What was (or would be) imported', schema: importResultSchema }, ...errorResponses(400, 401, 403, 404, 409) },
      handler: (request) => service.import(request.body, actorOf(request)),
    }),
  ];
}
