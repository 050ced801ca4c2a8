import type { AdapterKind, AnyAdapterDefinition } from './adapter-definition.js';
import { assertAdapterDefinition } from './adapter-validation.js';

/** Where a registered definition came from (for `holdfast adapters` and error messages). */
export interface AdapterOrigin {
  packageName: string;
  version: string;
  /** Directory of the package on disk. */
  directory?: string;
}

/** A registered definition with its origin. */
export interface RegisteredAdapter {
  definition: AnyAdapterDefinition;
  origin: AdapterOrigin;
}

/** Holds every loaded adapter definition, keyed by `kind-id`; rejects duplicates. */
export class AdapterRegistry {
  private readonly byKey = new Map<string, RegisteredAdapter>();

  /** Registers a definition; throws naming both packages when the `kind-id` is taken. */
  register(definition: unknown, origin: AdapterOrigin): RegisteredAdapter {
    assertAdapterDefinition(definition, origin.packageName);
    const key = `${definition.kind}-${definition.id}`;
    const existing = this.byKey.get(key);
    if (existing) {
      throw new Error(
        `Adapter ${key} from package ${origin.packageName} is a duplicate: ${existing.origin.packageName} already provides it`,
      );
    }
    const entry = { definition, origin };
    this.byKey.set(key, entry);
    return entry;
  }

  get(kind: AdapterKind, id: string): RegisteredAdapter | undefined {
    return this.byKey.get(`${kind}-${id}`);
  }

  /** Like {@link get} but throws a message naming the missing adapter. */
  require(kind: AdapterKind, id: string): RegisteredAdapter {
    const found = this.get(kind, id);
    if (!found) throw new Error(`No ${kind} adapter with id "${id}" is installed`);
    return found;
  }

  list(kind?: AdapterKind): RegisteredAdapter[] {
    const all = [...this.byKey.values()];
    return (kind ? all.filter((a) => a.definition.kind === kind) : all).sort((a, b) =>
      `${a.definition.kind}-${a.definition.id}`.localeCompare(`${b.definition.kind}-${b.definition.id}`),
    );
  }
}
