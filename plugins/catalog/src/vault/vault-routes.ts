import { defineRoute, routeResult, runProtectedAction, type RouteDefinition } from '@holdfast/kernel';
import { protectedActionGuard } from '../shared/protected-actions.js';
import { z } from 'zod';
import { actorOf, authOf, visibleIds } from '../shared/access.js';
import type { CatalogDeps } from '../shared/deps.js';
import { created, deletedSchema, errorResponses, errorSchema, idParams } from '../shared/schemas.js';
import { kitFolderName, recoveryKitBuilder, tarOf } from './recovery-kit.js';
import { createVaultBody, updateVaultBody, vaultProfileSchema } from './vault-schemas.js';
import type { VaultService } from './vault-service.js';

const TAGS = ['vault'];
const scope = { resource: 'vault', param: 'id' };

/** `/api/vault`: encryption profiles; keys leave only inside the audited recovery kit. */
export function vaultRoutes(deps: CatalogDeps, service: VaultService): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/vault',
      summary: 'List encryption profiles (never their keys)',
      tags: TAGS,
      access: { permission: 'vault:read' },
      responses: { 200: { description: 'Profiles', schema: z.array(vaultProfileSchema) }, ...errorResponses(401, 403) },
      handler: async (request) => service.list(await visibleIds(deps.container, authOf(request), 'vault:read', 'vault')),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/vault/:id',
      summary: 'One encryption profile',
      tags: TAGS,
      access: { permission: 'vault:read', scope },
      request: { params: idParams },
      responses: { 200: { description: 'Profile', schema: vaultProfileSchema }, ...errorResponses(401, 403, 404) },
      handler: async (request) => service.view(await service.find(request.params.id)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/vault/:id/recovery-kit',
      summary: 'Download the recovery kit (decrypt script, README, key) of a profile as a tar archive (audited)',
      tags: TAGS,
      access: { permission: 'vault:read', scope },
      request: { params: idParams },
      responses: {
        200: { description: 'tar archive holding the key: keep it secret', contentType: 'application/x-tar' },
        ...errorResponses(401, 403, 404),
        503: { description: 'The engine that builds kits is not loaded', schema: errorSchema },
      },
      handler: async (request) => {
        const row = await service.find(request.params.id);
        const build = recoveryKitBuilder(deps.container);
        const files = await build({ key: service.key(row), profileName: row.name, signal: request.signal });
        await deps.audit.record(actorOf(request), 'RECOVERY_KIT', 'vault', row.id, { files: files.map((file) => file.name) });
        const folder = kitFolderName(row.name);
        return routeResult({
          headers: {
            'Content-Type': 'application/x-tar',
            'Content-Disposition': `attachment; filename="${folder}.tar"`,
            'Cache-Control': 'no-store',
          },
          stream: tarOf(folder, files),
        });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/vault',
      summary: 'Create an encryption profile with a generated or imported 32-byte key',
      tags: TAGS,
      access: { permission: 'vault:write' },
      request: { body: createVaultBody },
      responses: { 201: { description: 'Created', schema: vaultProfileSchema }, ...errorResponses(400, 401, 403, 409) },
      handler: async (request) => created(await service.create(request.body, actorOf(request))),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/vault/:id',
      summary: 'Rename or describe an encryption profile (the key never changes)',
      tags: TAGS,
      access: { permission: 'vault:write', scope },
      request: { params: idParams, body: updateVaultBody },
      responses: { 200: { description: 'Updated', schema: vaultProfileSchema }, ...errorResponses(400, 401, 403, 404, 409) },
      handler: async (request) => service.update(request.params.id, request.body, actorOf(request)),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/vault/:id',
      summary: 'Delete an encryption profile (409 listing the jobs that still use it; needs a fresh second factor)',
      tags: TAGS,
      access: { permission: 'vault:write', scope },
      request: { params: idParams },
      responses: { 200: { description: 'Deleted', schema: deletedSchema }, ...errorResponses(401, 403, 404, 409) },
      handler: async (request) => {
        // Backups made with the profile cannot be read without its key: a protected action (issue 45.4).
        await runProtectedAction(protectedActionGuard(deps), request, { kind: 'encryption-profile.delete', resource: 'encryption-profile', resourceId: request.params.id }, () =>
          service.delete(request.params.id, actorOf(request)),
        );
        return { success: true };
      },
    }),
  ];
}
