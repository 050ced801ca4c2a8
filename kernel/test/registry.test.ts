import { container, inject, injectable } from 'tsyringe';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import {
  ADAPTER_API_VERSION,
  ADAPTER_BRAND,
  type AdapterError,
  AdapterRegistry,
  TOKENS,
  assertAdapterDefinition,
  instantiateAdapter,
  isAdapterError,
  type AdapterContext,
} from '../src/index.js';

@injectable()
class EchoImpl {
  constructor(
    @inject(TOKENS.AdapterConfig) readonly config: { greeting: string },
    @inject(TOKENS.AdapterContext) readonly context: AdapterContext,
  ) {}
}

const definition = {
  brand: ADAPTER_BRAND,
  apiVersion: ADAPTER_API_VERSION,
  kind: 'storage' as const,
  id: 'echo',
  displayName: 'Echo',
  configSchema: z.object({ greeting: z.string().default('hello') }),
  capabilities: {},
  implementation: EchoImpl,
};

describe('adapter registry and instantiation', () => {
  it('registers, lists and rejects a duplicate naming both packages', () => {
    const registry = new AdapterRegistry();
    registry.register(definition, { packageName: 'pkg-one', version: '0.1.0' });
    expect(registry.get('storage', 'echo')?.origin.packageName).toBe('pkg-one');
    expect(() => registry.register(definition, { packageName: 'pkg-two', version: '0.1.0' })).toThrow(
      /storage-echo from package pkg-two is a duplicate: pkg-one/,
    );
    expect(registry.list('storage')).toHaveLength(1);
    expect(registry.list('source')).toHaveLength(0);
  });

  it.each([
    [{ ...definition, brand: 'other' }, /wrong brand/],
    [{ ...definition, apiVersion: 99 }, /apiVersion 99 is not supported/],
    [{ ...definition, kind: 'teleport' }, /unknown adapter kind/],
    [{ ...definition, id: 'Not_Kebab' }, /not kebab-case/],
    [{ ...definition, implementation: undefined }, /no implementation class/],
    [{ ...definition, configSchema: {} }, /no zod configSchema/],
  ])('rejects a bad definition with a message naming the package (%#)', (bad, message) => {
    expect(() => assertAdapterDefinition(bad, 'bad-pkg')).toThrow(message);
    expect(() => assertAdapterDefinition(bad, 'bad-pkg')).toThrow(/bad-pkg/);
  });

  it('builds an instance in a child container with parsed config and context', () => {
    const instance = instantiateAdapter(container, definition, {}, { instanceName: 'primary' });
    expect(instance).toBeInstanceOf(EchoImpl);
    expect(instance.config.greeting).toBe('hello');
    expect(instance.context.instanceName).toBe('primary');
    expect(container.isRegistered(TOKENS.AdapterConfig)).toBe(false);
  });

  it('rejects invalid config with a CONFIG AdapterError that does not echo the value', () => {
    const secretValue = 'hunter2-secret';
    try {
      instantiateAdapter(container, definition, { greeting: { secretValue } });
      expect.unreachable();
    } catch (error) {
      expect(isAdapterError(error)).toBe(true);
      expect((error as AdapterError).code).toBe('CONFIG');
      expect((error as Error).message).toMatch(/^\[storage-echo\] invalid configuration: greeting:/);
      expect((error as Error).message).not.toContain(secretValue);
    }
  });
});
