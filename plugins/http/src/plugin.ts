import { defineRoute, optionalToken, TOKENS, type HoldfastPlugin, type RouteDefinition } from '@holdfast/kernel';
import type { DependencyContainer } from 'tsyringe';
import { z } from 'zod';
import { healthRoute } from './health.js';
import { buildOpenApiDocument, mountedRoutesOf } from '@holdfast/http-server';

/** Serves the document of the routes it was mounted with; built once per route list, since routes never change. */
function openApiRoute(container: DependencyContainer): RouteDefinition {
  const cache = new WeakMap<readonly RouteDefinition[], object>();
  const route: RouteDefinition = defineRoute({
    method: 'GET',
    path: '/api/openapi.json',
    summary: 'The OpenAPI 3.1 document of every mounted route',
    tags: ['system'],
    // Any signed-in identity may read it; anonymous callers may not (only SPEC's public routes answer them).
    access: {},
    responses: {
      200: { description: 'OpenAPI 3.1 document.', schema: z.record(z.string(), z.unknown()) },
    },
    handler: () => {
      const routes = mountedRoutesOf(route) ?? [route];
      let document = cache.get(routes);
      if (!document) {
        const version = container.isRegistered(TOKENS.RuntimeConfig, true)
          ? container.resolve(TOKENS.RuntimeConfig).version
          : 'unknown';
        document = buildOpenApiDocument(routes, { version });
        cache.set(routes, document);
      }
      return document;
    },
  });
  return route;
}

/** The http plugin: contributes `GET /api/health` and `GET /api/openapi.json`; the app itself is built by `createHttpApp`. */
export function createHttpPlugin(): HoldfastPlugin {
  return {
    name: 'http',
    // The app's request pipeline (createHttpApp) resolves the identity ports per request; the composition checks them.
    requires: [optionalToken(TOKENS.RuntimeConfig), optionalToken(TOKENS.Database)],
    routes: (container) => [healthRoute(container), openApiRoute(container)],
  };
}
