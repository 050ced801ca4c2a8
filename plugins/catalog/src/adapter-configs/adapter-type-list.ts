import type { AdapterRegistry } from '@holdfast/kernel';
import { z } from 'zod';
import { secretFields, typeOfKind } from './adapter-types.js';

/** JSON Schema of a config, or a note when the schema holds something JSON Schema cannot express. */
function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  try {
    return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  } catch (error) {
    return { description: `Schema not representable as JSON Schema: ${(error as Error).message}` };
  }
}

/** Every installed source, storage and notification adapter, described for the web app's forms. */
export function listAdapterTypes(registry: AdapterRegistry) {
  return registry.list().flatMap(({ definition }) => {
    const type = typeOfKind(definition.kind);
    if (!type) return [];
    return [
      {
        type,
        kind: definition.kind,
        adapterId: definition.id,
        displayName: definition.displayName,
        description: definition.description ?? null,
        capabilities: { ...definition.capabilities } as Record<string, unknown>,
        requiredCredentials: [...(definition.requiredCredentials ?? [])],
        secretFields: secretFields(definition),
        configSchema: jsonSchemaOf(definition.configSchema),
      },
    ];
  });
}
