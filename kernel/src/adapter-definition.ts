import type { z } from 'zod';
import type { InjectionToken } from 'tsyringe';

/** The brand every adapter definition carries; identity is checked by this string, never by `instanceof`. */
export const ADAPTER_BRAND = 'holdfast.adapter' as const;

/** The adapter contract version this kernel implements. Bump on a breaking change to any contract. */
export const ADAPTER_API_VERSION = 1 as const;

/** Contract versions this kernel can load. */
export const SUPPORTED_ADAPTER_API_VERSIONS: readonly number[] = [1];

/** The kinds of adapter the kernel knows. */
export const ADAPTER_KINDS = ['source', 'storage', 'notification', 'retention', 'naming'] as const;

/** One of {@link ADAPTER_KINDS}. */
export type AdapterKind = (typeof ADAPTER_KINDS)[number];

/**
 * The one name of an adapter outside code: its package folder (`adapters/<name>`), its npm name (`@holdfast/<name>`)
 * and its entry in `HOLDFAST_ADAPTERS_INCLUDE`/`_EXCLUDE`. Notification channels are `notify-<id>` (short and
 * distinct from the `plugins/notifications` feature).
 */
export const ADAPTER_NAME_PREFIX: Readonly<Record<AdapterKind, string>> = {
  source: 'source',
  storage: 'storage',
  notification: 'notify',
  retention: 'retention',
  naming: 'naming',
};

/** `adapterName('notification', 'generic-webhook')` is `notify-generic-webhook`. */
export function adapterName(kind: AdapterKind, id: string): string {
  return `${ADAPTER_NAME_PREFIX[kind]}-${id}`;
}

/** kebab-case, starting with a letter: `sftp`, `generic-webhook`, `postgres`. */
export const ADAPTER_ID_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/** A class the container can build; adapters mark it `@injectable()` and inject config and context by token. */
export type AdapterImplementation<T> = new (...args: never[]) => T;

/**
 * What every adapter package exports by default. Produced by the SDK's `define*Adapter` helpers, which validate
 * the id, stamp brand and version, and freeze the object.
 */
export interface AdapterDefinition<
  K extends AdapterKind = AdapterKind,
  Schema extends z.ZodType = z.ZodType,
  Capabilities extends object = object,
  Instance = unknown,
> {
  readonly brand: typeof ADAPTER_BRAND;
  readonly apiVersion: number;
  readonly kind: K;
  readonly id: string;
  readonly displayName: string;
  readonly description?: string;
  /** zod schema of the instance config; secrets carry `.meta({ secret: true })`, fields `.describe()`. */
  readonly configSchema: Schema;
  readonly capabilities: Readonly<Capabilities>;
  /** Credential profile types this adapter needs assigned before it can work (empty: none). */
  readonly requiredCredentials?: readonly string[];
  readonly implementation: AdapterImplementation<Instance>;
}

/** Loose definition type for registries that hold every kind. */
export type AnyAdapterDefinition = AdapterDefinition<AdapterKind, z.ZodType, object, unknown>;

/** Type of the parsed config of a definition. */
export type ConfigOf<D> = D extends AdapterDefinition<AdapterKind, infer S> ? z.output<S> : never;

/** Reads a `holdfast` block from a package.json: how discovery finds adapter packages. */
export interface AdapterPackageManifest {
  kind: AdapterKind;
  id: string;
}

/** Token type alias so plugins need not import tsyringe types directly. */
export type Token<T> = InjectionToken<T>;
