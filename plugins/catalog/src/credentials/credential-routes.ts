import { defineRoute, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { actorOf, authOf, visibleIds } from '../shared/access.js';
import type { CatalogDeps } from '../shared/deps.js';
import { created, deletedSchema, errorResponses, idParams } from '../shared/schemas.js';
import {
  createCredentialBody,
  credentialSchema,
  generateSshKeyBody,
  revealedSchema,
  updateCredentialBody,
  usageSchema,
} from './credential-schemas.js';
import type { CredentialService } from './credential-service.js';

const TAGS = ['credentials'];
const scope = { resource: 'credential', param: 'id' };

/** `/api/credentials`: profiles answer without secrets; revealing one needs `credentials:reveal` and is audited. */
export function credentialRoutes(deps: CatalogDeps, service: CredentialService): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/credentials',
      summary: 'List credential profiles (never their secrets)',
      tags: TAGS,
      access: { permission: 'credentials:read' },
      responses: { 200: { description: 'Profiles', schema: z.array(credentialSchema) }, ...errorResponses(401, 403) },
      handler: async (request) =>
        service.list(await visibleIds(deps.container, authOf(request), 'credentials:read', 'credential')),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/credentials/ssh-key',
      summary: 'Create an SSH_KEY profile with a generated Ed25519, RSA 4096 or ECDSA P-256 key pair',
      tags: TAGS,
      access: { permission: 'credentials:write' },
      request: { body: generateSshKeyBody },
      responses: {
        201: { description: 'Created; publicKey is the OpenSSH line to install', schema: credentialSchema.extend({ publicKey: z.string() }) },
        ...errorResponses(400, 401, 403, 409),
      },
      handler: async (request) => created(await service.generateSsh(request.body, actorOf(request))),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/credentials/:id',
      summary: 'One credential profile (secrets as secretStatus)',
      tags: TAGS,
      access: { permission: 'credentials:read', scope },
      request: { params: idParams },
      responses: { 200: { description: 'Profile', schema: credentialSchema }, ...errorResponses(401, 403, 404) },
      handler: async (request) => service.view(await service.find(request.params.id)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/credentials/:id/usage',
      summary: 'Adapter configurations (and their jobs) that use a credential profile',
      tags: TAGS,
      access: { permission: 'credentials:read', scope },
      request: { params: idParams },
      responses: { 200: { description: 'Usage', schema: usageSchema }, ...errorResponses(401, 403, 404) },
      handler: async (request) => service.usage(request.params.id),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/credentials/:id/reveal',
      summary: 'Reveal the decrypted payload of a credential profile (audited)',
      tags: TAGS,
      access: { permission: 'credentials:reveal', scope },
      request: { params: idParams },
      responses: { 200: { description: 'Decrypted payload', schema: revealedSchema }, ...errorResponses(401, 403, 404) },
      handler: async (request) => service.reveal(request.params.id, actorOf(request)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/credentials',
      summary: 'Create a credential profile',
      tags: TAGS,
      access: { permission: 'credentials:write' },
      request: { body: createCredentialBody },
      responses: { 201: { description: 'Created', schema: credentialSchema }, ...errorResponses(400, 401, 403, 409) },
      handler: async (request) => created(await service.create(request.body, actorOf(request))),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/credentials/:id',
      summary: 'Update a credential profile; secrets sent empty or omitted keep their stored value',
      tags: TAGS,
      access: { permission: 'credentials:write', scope },
      request: { params: idParams, body: updateCredentialBody },
      responses: { 200: { description: 'Updated', schema: credentialSchema }, ...errorResponses(400, 401, 403, 404, 409) },
      handler: async (request) => service.update(request.params.id, request.body, actorOf(request)),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/credentials/:id',
      summary: 'Delete a credential profile (409 while adapter configurations use it)',
      tags: TAGS,
      access: { permission: 'credentials:write', scope },
      request: { params: idParams },
      responses: { 200: { description: 'Deleted', schema: deletedSchema }, ...errorResponses(401, 403, 404, 409) },
      handler: async (request) => {
        await service.delete(request.params.id, actorOf(request));
        return { success: true };
      },
    }),
  ];
}
