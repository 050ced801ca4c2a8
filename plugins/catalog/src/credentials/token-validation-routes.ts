import { defineRoute, NotFoundError, ValidationError, type RouteDefinition } from '@holdfast/kernel';
import type { AdapterConfigService } from '../adapter-configs/adapter-config-service.js';
import { testConnectionResult } from '../adapter-configs/adapter-schemas.js';
import { testConnection } from '../adapter-configs/connection-test.js';
import { CredentialProfileEntity } from '../entities/profiles.js';
import type { CatalogDeps } from '../shared/deps.js';
import { errorResponses, idParams } from '../shared/schemas.js';

/** The cloud drives whose OAuth tokens can be validated: route segment and storage adapter id. */
export const CLOUD_DRIVES = [
  { provider: 'google-drive', adapterId: 'gdrive', name: 'Google Drive' },
  { provider: 'dropbox', adapterId: 'dropbox', name: 'Dropbox' },
  { provider: 'onedrive', adapterId: 'onedrive', name: 'OneDrive' },
] as const;

/**
 * SPEC "Authentication" 8: three cloud-drive token validation endpoints, each requiring `credentials:read`. The
 * OAUTH profile's tokens are tried against the vendor through the installed storage adapter's `check()` with its
 * default folder (refreshing the access token, and storing the renewed one, when needed). The vendor's endpoints are
 * the adapter's defaults and cannot be overridden here: a caller may not send the stored tokens to another host.
 */
export function tokenValidationRoutes(deps: CatalogDeps, adapters: AdapterConfigService): RouteDefinition[] {
  return CLOUD_DRIVES.map((drive) =>
    defineRoute({
      method: 'POST',
      path: `/api/credentials/:id/validate/${drive.provider}`,
      summary: `Check that an OAUTH credential profile's tokens work with ${drive.name}`,
      tags: ['credentials'],
      access: { permission: 'credentials:read', scope: { resource: 'credential', param: 'id' } },
      request: { params: idParams },
      responses: { 200: { description: 'Outcome of the check', schema: testConnectionResult }, ...errorResponses(400, 401, 403, 404) },
      handler: async ({ params }) => {
        const profile = await deps.em().findOne(CredentialProfileEntity, { id: params.id });
        if (!profile) throw new NotFoundError('Credential profile not found');
        if (profile.type !== 'OAUTH') {
          throw new ValidationError(`Invalid request: id: the profile is of type ${profile.type}; ${drive.name} needs an OAUTH profile`, [
            { path: 'params.id', message: `type ${profile.type}, OAUTH needed` },
          ]);
        }
        return testConnection(deps, adapters, { type: 'storage', adapterId: drive.adapterId, config: {}, primaryCredentialId: params.id });
      },
    }),
  );
}
