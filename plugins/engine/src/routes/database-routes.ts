import { defineRoute, ValidationError, type JobCatalog, type RouteDefinition, type SourceAdapter } from '@holdfast/kernel';
import { z } from 'zod';
import { disposeAll, type AdapterFactory } from '../run/adapters.js';
import { listWithin } from '../restore/restore-preflight.js';

const errorBody = z.object({ error: z.string() });

const databaseListing = z.object({
  databases: z.array(
    z.object({
      name: z.string(),
      sizeBytes: z.number().int().nullable().describe('Size on the server in bytes; null when the source adapter does not report sizes'),
    }),
  ),
});

/**
 * `GET /api/adapters/:id/databases`: what a source holds now, read from the server (the restore wizard lists it and
 * uses it as its connection check). In the engine plugin because the engine instantiates configured adapters; the
 * catalog only resolves the configuration.
 */
export function databaseRoutes(catalog: () => JobCatalog, adapters: () => AdapterFactory): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/adapters/:id/databases',
      summary: 'The databases a source holds now, with their sizes where the adapter reports them (connects to the source)',
      tags: ['adapters'],
      access: { permission: 'sources:read', scope: { resource: 'source', param: 'id' } },
      request: { params: z.object({ id: z.string().min(1).max(64) }) },
      responses: {
        200: { description: 'The databases, by name.', schema: databaseListing },
        400: { description: 'The id names a destination or channel, or a source whose adapter cannot list databases.', schema: errorBody },
        404: { description: 'No adapter configuration with this id.', schema: errorBody },
        502: { description: 'The source could not be reached (or did not answer within 20 s); the message names it.', schema: errorBody },
      },
      handler: async ({ params }) => {
        const resolved = await catalog().resolveAdapterConfig(params.id);
        if (resolved.kind !== 'source') throw new ValidationError(`"${resolved.name}" is a ${resolved.kind === 'storage' ? 'storage destination' : 'notification channel'}, not a source: only sources have databases`);
        const factory = adapters();
        if (!factory.canListDatabases(resolved.adapterId)) throw new ValidationError(`Source "${resolved.name}" (${resolved.adapterId}) cannot list its databases`);
        let source: SourceAdapter | undefined;
        try {
          source = factory.source(resolved);
          const instance = source;
          const databases = instance.databaseSizes
            ? (await listWithin(resolved.name, () => instance.databaseSizes!())).map(({ name, sizeBytes }) => ({ name, sizeBytes: Math.round(sizeBytes) }))
            : (await listWithin(resolved.name, () => instance.listDatabases())).map((name) => ({ name, sizeBytes: null }));
          return { databases: databases.sort((a, b) => a.name.localeCompare(b.name)) };
        } finally {
          await disposeAll([source]);
        }
      },
    }),
  ];
}
