// Config-schema markers: an adapter writes them (`secret()`, `secretTarget()`, `localPath()`), the host reads them
// (`secretFieldsOf()`...) to seal secrets, guard where they are sent and check local paths. One module, so the
// writer and the reader agree on the marker keys.
import { z } from 'zod';
import type { LocalPathUse } from './local-paths.js';

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

/** True when a schema node (or the type it wraps) carries `.meta({ [key]: ... })`; answers the value. */
function metaOf(schema: z.ZodType, key: string): unknown {
  let current: z.ZodType | undefined = schema;
  for (let depth = 0; current && depth < 5; depth++) {
    const value = (z.globalRegistry.get(current) as Record<string, unknown> | undefined)?.[key];
    if (value !== undefined) return value;
    current = (current as unknown as { def?: { innerType?: z.ZodType } }).def?.innerType;
  }
  return undefined;
}

function shapeOf(schema: z.ZodType): Record<string, z.ZodType> {
  return (schema as unknown as { shape?: Record<string, z.ZodType> }).shape ?? {};
}

/**
 * Marks a config field as saying where the secrets go (host, port, URL, bucket, share...): a stored secret is
 * reused only while every such field is unchanged, so a caller cannot send it to a host of their choosing.
 */
export function secretTarget<T extends z.ZodType>(schema: T): T {
  return schema.meta({ secretTarget: true }) as T;
}

/** Field names taken as secret targets in a schema that declares none with {@link secretTarget}. */
export const DEFAULT_SECRET_TARGET_FIELDS: readonly string[] = [
  'host', 'hostname', 'hosts', 'port', 'url', 'uri', 'endpoint', 'server', 'serverUrl', 'baseUrl', 'apiUrl',
  'webhookUrl', 'address', 'domain', 'region', 'bucket', 'share', 'container', 'connectionString', 'socketPath',
  // The tools found here are handed the password.
  'binDirectory',
];

/** Any name ending like these is a target too (`smtpHost`, `gotifyUrl`, `s3Endpoint`...). */
const TARGET_SUFFIX = /(Host|Hostname|Port|Url|Uri|Endpoint|Server|Bucket|Share|Domain)$/;

/**
 * Names of the fields that say where a config's secrets go: the ones marked {@link secretTarget}, or when none is
 * marked, the fields named like a target ({@link DEFAULT_SECRET_TARGET_FIELDS}, or ending in Host, Url...).
 */
export function secretTargetFieldsOf(schema: z.ZodType): string[] {
  const shape = shapeOf(schema);
  const declared = Object.entries(shape).filter(([, field]) => metaOf(field, 'secretTarget') === true).map(([name]) => name);
  if (declared.length > 0) return declared;
  return Object.keys(shape).filter((name) => DEFAULT_SECRET_TARGET_FIELDS.includes(name) || TARGET_SUFFIX.test(name));
}

/** What a local path field is used for (see {@link LocalPathUse} and the `LocalPathPolicy`). */
export type LocalPathFieldUse = LocalPathUse;

/**
 * Marks a config field (a string or an array of strings) as a path on the Holdfast host. The catalog checks it
 * against the operator's local path policy when the config is saved; the adapter checks again before use.
 */
export function localPath<T extends z.ZodType>(schema: T, use: LocalPathFieldUse): T {
  return schema.meta({ localPath: use }) as T;
}

/** The local path fields of an object config schema with their use. */
export function localPathFieldsOf(schema: z.ZodType): Array<{ field: string; use: LocalPathFieldUse }> {
  return Object.entries(shapeOf(schema)).flatMap(([field, node]) => {
    const use = metaOf(node, 'localPath');
    return typeof use === 'string' ? [{ field, use: use as LocalPathFieldUse }] : [];
  });
}
