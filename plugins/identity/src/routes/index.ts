import type { RouteDefinition } from '@holdfast/kernel';
import type { IdentityServices } from '../services.js';
import { apiKeyRoutes } from './api-key-routes.js';
import { authRoutes } from './auth-routes.js';
import { catalogRoutes } from './catalog-routes.js';
import { groupRoutes } from './group-routes.js';
import { userRoutes } from './user-routes.js';

/** Every route of the identity plugin. */
export function identityRoutes(services: IdentityServices): RouteDefinition[] {
  return [...authRoutes(services), ...userRoutes(services), ...groupRoutes(services), ...apiKeyRoutes(services), ...catalogRoutes(services)];
}
