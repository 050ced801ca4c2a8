import type { RouteDefinition } from '@holdfast/kernel';
import type { IdentityServices } from '../services.js';
import { apiKeyRoutes } from './api-key-routes.js';
import { authRoutes } from './auth-routes.js';
import { permissionAndAuditRoutes } from './permission-and-audit-routes.js';
import { groupRoutes } from './group-routes.js';
import { userRoutes } from './user-routes.js';
import { passkeyRoutes } from '../passkeys/passkey-routes.js';
import { twoFactorRoutes } from '../two-factor/two-factor-routes.js';
import { stepUpRoutes } from '../protected-actions/step-up-routes.js';

/** Every route of the identity plugin. */
export function identityRoutes(services: IdentityServices): RouteDefinition[] {
  return [...authRoutes(services), ...userRoutes(services), ...groupRoutes(services), ...apiKeyRoutes(services), ...permissionAndAuditRoutes(services), ...twoFactorRoutes(services), ...passkeyRoutes(services), ...stepUpRoutes(services)];
}
