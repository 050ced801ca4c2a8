import {
  ADAPTER_BRAND,
  ADAPTER_ID_PATTERN,
  ADAPTER_KINDS,
  SUPPORTED_ADAPTER_API_VERSIONS,
  type AnyAdapterDefinition,
} from './adapter-definition.js';

/** Brand check without `instanceof`: true for anything produced by a `define*Adapter` helper. */
export function isAdapterDefinition(value: unknown): value is AnyAdapterDefinition {
  return typeof value === 'object' && value !== null && (value as { brand?: unknown }).brand === ADAPTER_BRAND;
}

/**
 * Throws an error naming `source` (usually the package name) when `value` is not a loadable definition:
 * wrong brand, unsupported `apiVersion`, unknown kind, bad id or missing parts.
 */
export function assertAdapterDefinition(value: unknown, source: string): asserts value is AnyAdapterDefinition {
  if (!isAdapterDefinition(value)) {
    throw new Error(`${source}: default export is not a Holdfast adapter definition (missing or wrong brand)`);
  }
  if (!SUPPORTED_ADAPTER_API_VERSIONS.includes(value.apiVersion)) {
    throw new Error(
      `${source}: adapter apiVersion ${String(value.apiVersion)} is not supported (this kernel loads ${SUPPORTED_ADAPTER_API_VERSIONS.join(', ')})`,
    );
  }
  if (!(ADAPTER_KINDS as readonly string[]).includes(value.kind)) {
    throw new Error(`${source}: unknown adapter kind "${String(value.kind)}"`);
  }
  if (typeof value.id !== 'string' || !ADAPTER_ID_PATTERN.test(value.id)) {
    throw new Error(`${source}: adapter id "${String(value.id)}" is not kebab-case`);
  }
  if (typeof value.implementation !== 'function') {
    throw new Error(`${source}: adapter ${value.kind}-${value.id} has no implementation class`);
  }
  if (typeof (value.configSchema as { safeParse?: unknown } | undefined)?.safeParse !== 'function') {
    throw new Error(`${source}: adapter ${value.kind}-${value.id} has no zod configSchema`);
  }
}
