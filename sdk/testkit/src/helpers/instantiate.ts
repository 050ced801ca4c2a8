import { instantiateAdapter, type AdapterContext, type AnyAdapterDefinition } from '@holdfast/sdk';
import { container } from 'tsyringe';

/**
 * Builds one adapter instance the way the server does (`instantiateAdapter` in a fresh child container), so adapter
 * tests need no container of their own. Invalid config throws `AdapterError(CONFIG)`.
 */
export function createAdapterInstance<I = unknown>(definition: unknown, config: unknown, context: Partial<AdapterContext> = {}): I {
  return instantiateAdapter(container.createChildContainer(), definition as AnyAdapterDefinition, config, context) as I;
}
