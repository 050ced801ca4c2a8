import { z } from 'zod';

/** The subset of JSON Schema the adapters' config schemas use. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  description?: string;
  title?: string;
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  /** Holdfast: the value is a secret, stored encrypted and never returned. */
  secret?: boolean;
  [keyword: string]: unknown;
}

export type FormValues = Record<string, unknown>;

/** "maintenanceDatabase" -> "Maintenance database". */
export function labelOf(name: string, schema: JsonSchema): string {
  if (schema.title) return schema.title;
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1).replace(/\bssh\b/g, 'SSH').replace(/\bsha256\b/g, 'SHA-256');
}

export function typeOf(schema: JsonSchema): string {
  if (Array.isArray(schema.type)) return schema.type.find((type) => type !== 'null') ?? 'string';
  return schema.type ?? (schema.properties ? 'object' : 'string');
}

/** Empty strings, empty arrays and objects left empty mean "not set": they are left out of what is sent. */
export function pruneEmpty(values: FormValues): FormValues {
  const out: FormValues = {};
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value) && value.length === 0) continue;
    if (typeof value === 'object' && !Array.isArray(value)) {
      const inner = pruneEmpty(value as FormValues);
      if (Object.keys(inner).length > 0) out[key] = inner;
      continue;
    }
    out[key] = value;
  }
  return out;
}

/**
 * The zod validator of an adapter's config, built from its JSON Schema. When editing, secret fields already
 * stored are not required: left empty, the server keeps the stored value.
 */
export function validatorFor(schema: JsonSchema, storedSecrets: ReadonlySet<string>): z.ZodType {
  const required = (schema.required ?? []).filter((name) => !storedSecrets.has(name));
  return z.fromJSONSchema({ ...schema, required } as Parameters<typeof z.fromJSONSchema>[0]);
}

/** zod issues as `{ "ssh.host": "message" }`, keyed like the form fields. */
export function issuesByField(error: z.ZodError): Record<string, string> {
  const out: Record<string, string> = {};
  for (const issue of error.issues) {
    const key = issue.path.join('.');
    // A missing required key reports on the parent object; name the field instead.
    const missing = issue.code === 'invalid_type' && issue.input === undefined ? 'Required' : issue.message;
    out[key || '_'] ??= missing;
  }
  return out;
}

/** The initial form values: stored config (no secrets in it) over the schema defaults of top-level fields. */
export function initialValues(schema: JsonSchema, stored: FormValues | undefined): FormValues {
  const values: FormValues = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (property.default !== undefined && typeOf(property) !== 'object') values[name] = property.default;
  }
  return { ...values, ...(stored ?? {}) };
}
