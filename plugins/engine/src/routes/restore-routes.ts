import { defineRoute, NotFoundError, ValidationError, type AuditWriter, type JobCatalog, type RouteDefinition } from '@holdfast/kernel';
import { assertAgeKeyOpens, isAgeEncryption, parsePrivateKeyField, privateKeyRequired } from '../codec/age/index.js';
import { holdIdentity } from '../restore/held-identities.js';
import { readSidecar } from '../run/sidecar.js';
import { z } from 'zod';
import type { Engine } from '../queue/engine.js';
import { restoreRequestSchema } from '../restore/restore-request.js';
import { excludedTarget } from '../restore/restore-run.js';
import { refuseAccidentalOverwrite } from '../restore/restore-preflight.js';
import type { AdapterFactory } from '../run/adapters.js';
import { triggerOf } from './job-run-routes.js';

const errorBody = z.object({ error: z.string() });

/** `POST /api/storage/:id/restore`: queues a Restore execution of a backup stored on destination `:id`. */
export function restoreRoutes(engine: Engine, catalog: () => JobCatalog, audit: () => AuditWriter | undefined, adapters: () => AdapterFactory): RouteDefinition[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/storage/:id/restore',
      summary: 'Restore a backup file from a storage destination into a source',
      tags: ['storage'],
      access: { permission: 'storage:restore', scope: { resource: 'destination', param: 'id' } },
      request: { params: z.object({ id: z.string().min(1).max(64) }), body: restoreRequestSchema },
      responses: {
        200: { description: 'Queued.', schema: z.object({ success: z.literal(true), executionId: z.string(), message: z.string() }) },
        404: { description: 'Storage or source not found.', schema: errorBody },
        409: {
          description: 'The target source is excluded from restores, or the restore would write over existing data (a target database that exists, a folder that is not empty, restoreToOriginalPaths) and the body does not say overwrite: true. Nothing is queued.',
          schema: errorBody,
        },
        502: { description: 'The target source could not be reached to check which databases it holds; nothing is queued.', schema: errorBody },
      },
      handler: async ({ params, body, auth, ip, userAgent, signal }) => {
        // Unknown ids answer 404 now rather than failing the queued run later.
        const storage = await catalog().resolveAdapterConfig(params.id);
        if (storage.kind !== 'storage') throw new NotFoundError('Storage not found');
        if (body.targetSourceId) {
          const target = await catalog().resolveAdapterConfig(body.targetSourceId);
          if (target.kind !== 'source') throw new NotFoundError('Source not found');
          if (target.excludeFromRestore) throw excludedTarget(target.name);
        }
        // The private key never reaches the stored request, the audit record or a log: only its in-memory token does.
        const { privateKey, ...request } = body;
        const identityToken = await checkPrivateKey(adapters(), storage, request.file, privateKey, signal);
        // Before queueing: an overwrite the request does not ask for answers 409 (issue 47).
        await refuseAccidentalOverwrite({ catalog: catalog(), adapters: adapters() }, { ...request, storageId: params.id }, signal);
        const execution = await engine.enqueueRestore({ ...request, storageId: params.id, ...(identityToken ? { identityToken } : {}) }, triggerOf(auth));
        await audit()
          ?.write({ userId: auth?.userId ?? null, action: 'restore', resource: 'storage', resourceId: params.id, details: { file: body.file, targetSourceId: body.targetSourceId ?? null, overwrite: body.overwrite === true, executionId: execution.id }, ipAddress: ip, userAgent: userAgent ?? null })
          .catch(() => undefined);
        return { success: true as const, executionId: execution.id, message: 'Restore queued' };
      },
    }),
  ];
}

/**
 * Backups of a public-key profile (issue 45) need `privateKey`; others refuse one. A given key must open the backup's
 * age header (a wrong key is a 400 here, before anything is queued). Returns the token of the held key, if any.
 */
async function checkPrivateKey(
  adapters: AdapterFactory,
  config: Awaited<ReturnType<JobCatalog['resolveAdapterConfig']>>,
  file: string,
  privateKey: string | undefined,
  signal: AbortSignal | undefined,
): Promise<string | undefined> {
  const identity = privateKey === undefined ? undefined : parsePrivateKeyField(privateKey, 'body.privateKey');
  const storage = adapters.storage(config);
  try {
    const sidecar = await readSidecar(storage.adapter, file, signal).catch(() => null);
    if (!isAgeEncryption(sidecar?.encryption)) {
      if (identity) throw new ValidationError(`Invalid request: body.privateKey: "${file}" is not encrypted with a public-key profile; send no privateKey`, [{ path: 'body.privateKey', message: 'only for backups of a public-key encryption profile' }]);
      return undefined;
    }
    if (!identity) throw privateKeyRequired(file, sidecar.encryption.recipient, 'body.privateKey');
    await assertAgeKeyOpens(storage.adapter, file, identity, 'body.privateKey', signal);
    return holdIdentity(identity);
  } finally {
    await storage.adapter.dispose?.().catch(() => undefined);
  }
}
