import {
  ADAPTER_API_VERSION,
  ADAPTER_BRAND,
  ADAPTER_ID_PATTERN,
  type AdapterDefinition,
  type AdapterImplementation,
  type AdapterKind,
  type NamingCapabilities,
  type NamingStrategy,
  type NotificationCapabilities,
  type NotificationChannel,
  type RetentionCapabilities,
  type RetentionStrategy,
  type SourceAdapter,
  type SourceCapabilities,
  type StorageAdapter,
  type StorageCapabilities,
} from '@holdfast/kernel/adapter';
import { z } from 'zod';

/** What an author writes; brand, version and kind are stamped by the helper. */
export interface AdapterSpec<S extends z.ZodType, C extends object, I> {
  id: string;
  displayName: string;
  description?: string;
  configSchema: S;
  capabilities: C;
  requiredCredentials?: readonly string[];
  implementation: AdapterImplementation<I>;
}

function define<K extends AdapterKind, S extends z.ZodType, C extends object, I>(
  kind: K,
  spec: AdapterSpec<S, C, I>,
): AdapterDefinition<K, S, C, I> {
  if (typeof spec.id !== 'string' || !ADAPTER_ID_PATTERN.test(spec.id)) {
    throw new Error(`Adapter id "${String(spec.id)}" must be kebab-case (for example "my-storage")`);
  }
  if (!spec.displayName?.trim()) throw new Error(`Adapter ${kind}-${spec.id} needs a displayName`);
  if (typeof spec.implementation !== 'function') {
    throw new Error(`Adapter ${kind}-${spec.id} needs an implementation class`);
  }
  if (!(spec.configSchema instanceof z.ZodType)) {
    throw new Error(`Adapter ${kind}-${spec.id} needs a zod configSchema`);
  }
  return Object.freeze({
    brand: ADAPTER_BRAND,
    apiVersion: ADAPTER_API_VERSION,
    kind,
    id: spec.id,
    displayName: spec.displayName,
    description: spec.description,
    configSchema: spec.configSchema,
    capabilities: Object.freeze({ ...spec.capabilities }),
    requiredCredentials: Object.freeze([...(spec.requiredCredentials ?? [])]),
    implementation: spec.implementation,
  });
}

/** Defines a backup source (database engine, directories, volume). */
export function defineSourceAdapter<S extends z.ZodType>(spec: AdapterSpec<S, SourceCapabilities, SourceAdapter>) {
  return define('source', spec);
}

/** Defines a storage destination. */
export function defineStorageAdapter<S extends z.ZodType>(spec: AdapterSpec<S, StorageCapabilities, StorageAdapter>) {
  return define('storage', spec);
}

/** Defines a notification channel. */
export function defineNotificationAdapter<S extends z.ZodType>(
  spec: AdapterSpec<S, NotificationCapabilities, NotificationChannel>,
) {
  return define('notification', spec);
}

/** Defines a retention strategy; its config schema is the policy shape. */
export function defineRetentionStrategy<S extends z.ZodType>(
  spec: AdapterSpec<S, RetentionCapabilities, RetentionStrategy>,
) {
  return define('retention', spec);
}

/** Defines a naming strategy. */
export function defineNamingStrategy<S extends z.ZodType>(spec: AdapterSpec<S, NamingCapabilities, NamingStrategy>) {
  return define('naming', spec);
}
