import { z } from 'zod';

/** Marks a config field as secret: stored encrypted, answered as `secretStatus`, hidden from logs. */
export function secret<T extends z.ZodType>(schema: T): T {
  return schema.meta({ secret: true }) as T;
}

/** True when a schema node carries `.meta({ secret: true })`. */
export function isSecretSchema(schema: z.ZodType): boolean {
  let current: z.ZodType | undefined = schema;
  // Wrappers (optional, default, nullable) may hold the marker on the inner type.
  for (let depth = 0; current && depth < 5; depth++) {
    if ((z.globalRegistry.get(current) as { secret?: unknown } | undefined)?.secret === true) return true;
    current = (current as unknown as { def?: { innerType?: z.ZodType } }).def?.innerType;
  }
  return false;
}

/** Names of the secret fields of an object config schema. */
export function secretFieldsOf(schema: z.ZodType): string[] {
  const shape = (schema as unknown as { shape?: Record<string, z.ZodType> }).shape;
  if (!shape) return [];
  return Object.entries(shape)
    .filter(([, field]) => isSecretSchema(field))
    .map(([name]) => name);
}
