import type { RouteDefinition } from '@holdfast/kernel';

/**
 * Which route list an app mounted, keyed by each route object. The OpenAPI route has no access to the app that
 * serves it (handlers see only a framework-neutral request), so it looks its own list up here.
 */
const mountedWith = new WeakMap<RouteDefinition, readonly RouteDefinition[]>();

/** Records that `routes` were mounted together. */
export function recordMountedRoutes(routes: readonly RouteDefinition[]): void {
  for (const route of routes) mountedWith.set(route, routes);
}

/** The list `route` was mounted with, or undefined when no app mounted it yet. */
export function mountedRoutesOf(route: RouteDefinition): readonly RouteDefinition[] | undefined {
  return mountedWith.get(route);
}
