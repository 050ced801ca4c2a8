import { ValidationError, type AdapterKind, type AdapterRegistry, type AnyAdapterDefinition } from '@holdfast/kernel';
import { secretFieldsOf } from '@holdfast/kernel';

/** AdapterConfig `type` values (SPEC). */
export const ADAPTER_CONFIG_TYPES = ['database', 'storage', 'notification'] as const;

/** One of {@link ADAPTER_CONFIG_TYPES}. */
export type AdapterConfigType = (typeof ADAPTER_CONFIG_TYPES)[number];

/** SPEC type to kernel adapter kind: `database` configs are `source` adapters. */
export function kindOfType(type: AdapterConfigType): Extract<AdapterKind, 'source' | 'storage' | 'notification'> {
  return type === 'database' ? 'source' : type;
}

/** Kernel kind back to the SPEC type. */
export function typeOfKind(kind: AdapterKind): AdapterConfigType | null {
  if (kind === 'source') return 'database';
  if (kind === 'storage' || kind === 'notification') return kind;
  return null;
}

/** The read and write permissions of each adapter type (identity's permission catalog) and its grant resource. */
export const ADAPTER_PERMISSIONS: Record<AdapterConfigType, { read: string; write: string; resource: string }> = {
  database: { read: 'sources:read', write: 'sources:write', resource: 'source' },
  storage: { read: 'destinations:read', write: 'destinations:write', resource: 'destination' },
  notification: { read: 'notifications:read', write: 'notifications:write', resource: 'notification' },
};

/** The installed definition of `type`/`adapterId`, or a 400 naming what is missing. */
export function definitionFor(registry: AdapterRegistry, type: AdapterConfigType, adapterId: string): AnyAdapterDefinition {
  const found = registry.get(kindOfType(type), adapterId);
  if (!found) {
    throw new ValidationError(`Invalid request: adapterId: no ${kindOfType(type)} adapter "${adapterId}" is installed`, [
      { path: 'body.adapterId', message: `no ${kindOfType(type)} adapter "${adapterId}" is installed` },
    ]);
  }
  return found.definition;
}

/** Names of the secret fields of a definition's config. */
export function secretFields(definition: AnyAdapterDefinition): string[] {
  return secretFieldsOf(definition.configSchema);
}
