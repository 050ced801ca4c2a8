import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  ADAPTER_API_VERSION,
  ADAPTER_BRAND,
  TOKENS,
  defineNamingStrategy,
  defineNotificationAdapter,
  defineRetentionStrategy,
  defineSourceAdapter,
  defineStorageAdapter,
  inject,
  injectable,
  secret,
  secretFieldsOf,
  z,
  type StorageAdapter,
} from '../src/index.js';
// The registry and the marker reader are the host's side of a definition, from the kernel's main entry.
import { AdapterRegistry, isSecretSchema } from '@holdfast/kernel';

const schema = z.object({
  path: z.string().describe('Root directory'),
  token: secret(z.string().optional().describe('Access token')),
});

@injectable()
class MemoryStorage implements StorageAdapter {
  constructor(@inject(TOKENS.AdapterConfig) readonly config: z.output<typeof schema>) {}
  async check() {
    return { ok: true, message: 'ok' };
  }
  async put(key: string) {
    return { key, size: 0 };
  }
  async get() {
    return Readable.from([]);
  }
  async *list() {}
  async stat(key: string) {
    return { key, size: 0, modifiedAt: new Date(0) };
  }
  async delete() {}
}

const capabilities = { rangeReads: false, serverChecksum: false, parallelMetadataReads: true, symlinks: false, maxParallelParts: 1 };

describe('define*Adapter helpers', () => {
  it('stamp brand, version and kind, and freeze the result', () => {
    const definition = defineStorageAdapter({
      id: 'memory',
      displayName: 'Memory',
      configSchema: schema,
      capabilities,
      implementation: MemoryStorage,
    });
    expect(definition.brand).toBe(ADAPTER_BRAND);
    expect(definition.apiVersion).toBe(ADAPTER_API_VERSION);
    expect(definition.kind).toBe('storage');
    expect(Object.isFrozen(definition)).toBe(true);
    expect(Object.isFrozen(definition.capabilities)).toBe(true);
    expect(() => {
      (definition as { id: string }).id = 'other';
    }).toThrow(TypeError);
    expect(new AdapterRegistry().register(definition, { packageName: 'x', version: '0.1.0' }).definition).toBe(definition);
  });

  it.each([
    ['defineSourceAdapter', defineSourceAdapter, 'source'],
    ['defineNotificationAdapter', defineNotificationAdapter, 'notification'],
    ['defineRetentionStrategy', defineRetentionStrategy, 'retention'],
    ['defineNamingStrategy', defineNamingStrategy, 'naming'],
  ] as const)('%s stamps kind %s', (_name, define, kind) => {
    const definition = (define as (spec: unknown) => { kind: string })({
      id: 'sample',
      displayName: 'Sample',
      configSchema: z.object({}),
      capabilities: {},
      implementation: class {},
    });
    expect(definition.kind).toBe(kind);
  });

  it.each(['Memory', 'my_adapter', '-lead', 'trail-', '9lives', '', 'a--b'])('rejects the id %j', (id) => {
    expect(() =>
      defineStorageAdapter({ id, displayName: 'X', configSchema: schema, capabilities, implementation: MemoryStorage }),
    ).toThrow(/kebab-case/);
  });

  it('rejects a missing display name, implementation or schema', () => {
    const base = { id: 'ok', displayName: 'X', configSchema: schema, capabilities, implementation: MemoryStorage };
    expect(() => defineStorageAdapter({ ...base, displayName: ' ' })).toThrow(/displayName/);
    expect(() => defineStorageAdapter({ ...base, implementation: undefined as never })).toThrow(/implementation class/);
    expect(() => defineStorageAdapter({ ...base, configSchema: {} as never })).toThrow(/zod configSchema/);
  });
});

describe('secret fields', () => {
  it('finds fields marked with secret(), also through optional/default wrappers', () => {
    const config = z.object({
      host: z.string(),
      password: secret(z.string()),
      token: secret(z.string()).optional(),
      key: secret(z.string().default('')),
    });
    expect(secretFieldsOf(config).sort()).toEqual(['key', 'password', 'token']);
    expect(isSecretSchema(config.shape.host)).toBe(false);
  });

  it('the marker shows in the JSON Schema the web app draws forms from', () => {
    const json = z.toJSONSchema(z.object({ password: secret(z.string()) })) as {
      properties: Record<string, { secret?: boolean }>;
    };
    expect(json.properties.password?.secret).toBe(true);
  });
});
