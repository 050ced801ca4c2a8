import { defineRoute, runProtectedAction, type ProtectedAction, type ProtectedActionGuard, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { actorOf } from '../shared/access.js';
import { created, deletedSchema, errorResponses, idParams } from '../shared/schemas.js';
import type { TemplateRow, TemplateStore } from './template-store.js';

/** What the generic template routes need to know about one kind. */
export interface TemplateRouteSpec<Row extends TemplateRow, View, Fields> {
  /** `/api/retention-policies` */
  path: string;
  /** `retention policy` (summaries). */
  noun: string;
  tag: string;
  read: string;
  write: string;
  store: TemplateStore<Row, View, Fields>;
  createBody: z.ZodType;
  updateBody: z.ZodType;
  viewSchema: z.ZodType;
  /** Body keys that belong to the kind (not name/description/isDefault). */
  fieldKeys: readonly string[];
  /**
   * An update that is a protected action (issue 45.4: a retention policy's rules changing): the action to guard, or
   * null when this update is not one. With `guard`, the identity plugin's check.
   */
  protectedUpdate?: { actionOf(id: string, before: View, body: Record<string, unknown>): ProtectedAction | null; guard(): ProtectedActionGuard | undefined };
}

type Body = Record<string, unknown> & { name?: string; description?: string | null; isDefault?: boolean };

function split<Fields>(body: Body, fieldKeys: readonly string[], isUpdate: boolean): { name?: string; description?: string | null; isDefault?: boolean; fields: Fields } {
  const present = fieldKeys.filter((key) => body[key] !== undefined);
  const fields = isUpdate && present.length === 0 ? undefined : Object.fromEntries(present.map((key) => [key, body[key]]));
  return { name: body.name, description: body.description, isDefault: body.isDefault, fields: fields as Fields };
}

/** List, get, create, update and delete routes of one template kind. */
export function templateRoutes<Row extends TemplateRow, View, Fields>(spec: TemplateRouteSpec<Row, View, Fields>): RouteDefinition[] {
  const { path, noun, store } = spec;
  const tags = [spec.tag];
  return [
    defineRoute({
      method: 'GET',
      path,
      summary: `List ${noun}s`,
      tags,
      access: { permission: spec.read },
      responses: { 200: { description: `${noun}s`, schema: z.array(spec.viewSchema) }, ...errorResponses(401, 403) },
      handler: () => store.list(),
    }),
    defineRoute({
      method: 'GET',
      path: `${path}/:id`,
      summary: `One ${noun}`,
      tags,
      access: { permission: spec.read },
      request: { params: idParams },
      responses: { 200: { description: noun, schema: spec.viewSchema }, ...errorResponses(401, 403, 404) },
      handler: (request) => store.get(request.params.id),
    }),
    defineRoute({
      method: 'POST',
      path,
      summary: `Create a ${noun}`,
      tags,
      access: { permission: spec.write },
      request: { body: spec.createBody },
      responses: { 201: { description: 'Created', schema: spec.viewSchema }, ...errorResponses(400, 401, 403, 404, 409) },
      handler: async (request) => {
        const input = split<Fields>(request.body as Body, spec.fieldKeys, false);
        return created(await store.create({ ...input, name: input.name! }, actorOf(request)));
      },
    }),
    defineRoute({
      method: 'PUT',
      path: `${path}/:id`,
      summary: `Update a ${noun} (system records: only isDefault)`,
      tags,
      access: { permission: spec.write },
      request: { params: idParams, body: spec.updateBody },
      responses: { 200: { description: 'Updated', schema: spec.viewSchema }, ...errorResponses(400, 401, 403, 404, 409) },
      handler: async (request) => {
        const update = () => store.update(request.params.id, split<Fields | undefined>(request.body as Body, spec.fieldKeys, true), actorOf(request));
        const action = spec.protectedUpdate?.actionOf(request.params.id, await store.get(request.params.id), request.body as Body) ?? null;
        return action ? runProtectedAction(spec.protectedUpdate!.guard(), request, action, update) : update();
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: `${path}/:id`,
      summary: `Delete a ${noun} (409 for system records and while jobs use it)`,
      tags,
      access: { permission: spec.write },
      request: { params: idParams },
      responses: { 200: { description: 'Deleted', schema: deletedSchema }, ...errorResponses(401, 403, 404, 409) },
      handler: async (request) => {
        await store.delete(request.params.id, actorOf(request));
        return { success: true };
      },
    }),
  ];
}
