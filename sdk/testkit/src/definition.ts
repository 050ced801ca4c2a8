import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import {
  ADAPTER_BRAND,
  ADAPTER_ID_PATTERN,
  ADAPTER_KINDS,
  SUPPORTED_ADAPTER_API_VERSIONS,
  type AnyAdapterDefinition,
  z,
} from '@holdfast/sdk';
import { registerChecks, type ConformanceCheck } from './checks.js';
import { createAdapterInstance } from './helpers/instantiate.js';

/** Options of {@link describeAdapterDefinition}. */
export interface AdapterDefinitionSuiteOptions {
  /** The package's parsed package.json; its `holdfast` block must match the definition. */
  packageJson?: object;
  /** A valid config; the implementation must resolve with it through `instantiateAdapter` without connecting. */
  sampleConfig?: unknown;
}

/** Capability keys each kind declares, with the type every value must have. */
const CAPABILITY_SHAPES: Record<string, Record<string, 'boolean' | 'positive-integer'>> = {
  source: { multipleDatabases: 'boolean', listDatabases: 'boolean', restore: 'boolean', fileArchive: 'boolean' },
  storage: {
    rangeReads: 'boolean',
    serverChecksum: 'boolean',
    parallelMetadataReads: 'boolean',
    symlinks: 'boolean',
    maxParallelParts: 'positive-integer',
  },
  notification: { fields: 'boolean', emailRecipient: 'boolean' },
  retention: {},
  naming: {},
};

/** Direct dependencies an adapter package may not have: it reaches them through `@holdfast/sdk`. */
const FORBIDDEN_DEPENDENCIES = ['@holdfast/kernel', 'zod', 'tsyringe'];

function asDefinition(definition: unknown): AnyAdapterDefinition {
  assert.ok(typeof definition === 'object' && definition !== null, 'the definition must be an object');
  return definition as AnyAdapterDefinition;
}

function jsonSchemaOf(definition: AnyAdapterDefinition): { type?: string; properties?: Record<string, { description?: string }> } {
  return z.toJSONSchema(definition.configSchema, { io: 'input' }) as never;
}

function identityChecks(value: unknown): ConformanceCheck[] {
  return [
    {
      group: 'identity',
      name: 'carries the brand and a supported apiVersion',
      run: async () => {
        const definition = asDefinition(value);
        assert.equal(definition.brand, ADAPTER_BRAND, `brand must be "${ADAPTER_BRAND}" (use a define*Adapter helper)`);
        assert.ok(
          SUPPORTED_ADAPTER_API_VERSIONS.includes(definition.apiVersion),
          `apiVersion ${String(definition.apiVersion)} is not one of ${SUPPORTED_ADAPTER_API_VERSIONS.join(', ')}`,
        );
      },
    },
    {
      group: 'identity',
      name: 'has a kebab-case id, a known kind and a display name',
      run: async () => {
        const definition = asDefinition(value);
        assert.match(String(definition.id), ADAPTER_ID_PATTERN, `id "${String(definition.id)}" is not kebab-case`);
        assert.ok((ADAPTER_KINDS as readonly string[]).includes(definition.kind), `unknown kind "${String(definition.kind)}"`);
        assert.ok(typeof definition.displayName === 'string' && definition.displayName.trim() !== '', 'displayName is empty');
        assert.equal(typeof definition.implementation, 'function', 'implementation must be a class');
      },
    },
    {
      group: 'identity',
      name: 'is frozen, capabilities included',
      run: async () => {
        const definition = asDefinition(value);
        assert.ok(Object.isFrozen(definition), 'the definition object must be frozen');
        assert.ok(Object.isFrozen(definition.capabilities), 'the capabilities object must be frozen');
      },
    },
    {
      group: 'identity',
      name: 'declares every capability of its kind with the right type',
      run: async () => {
        const definition = asDefinition(value);
        const shape = CAPABILITY_SHAPES[definition.kind] ?? {};
        const capabilities = definition.capabilities as Record<string, unknown>;
        for (const [key, type] of Object.entries(shape)) {
          const actual = capabilities[key];
          if (type === 'boolean') assert.equal(typeof actual, 'boolean', `capabilities.${key} must be a boolean`);
          else assert.ok(Number.isInteger(actual) && (actual as number) >= 1, `capabilities.${key} must be an integer >= 1`);
        }
      },
    },
  ];
}

function schemaChecks(value: unknown): ConformanceCheck[] {
  return [
    {
      group: 'config schema',
      name: 'is a zod schema that converts to JSON Schema (the web app draws its form from it)',
      run: async () => {
        const definition = asDefinition(value);
        assert.ok(definition.configSchema instanceof z.ZodType, 'configSchema must be a zod schema built with the sdk `z`');
        let converted: ReturnType<typeof jsonSchemaOf>;
        try {
          converted = jsonSchemaOf(definition);
        } catch (error) {
          assert.fail(`z.toJSONSchema(configSchema) failed: ${(error as Error).message} (avoid transforms and custom types)`);
        }
        assert.equal(converted.type, 'object', 'configSchema must be a z.object');
        assert.doesNotThrow(() => JSON.stringify(converted), 'the JSON Schema must be serialisable');
      },
    },
    {
      group: 'config schema',
      name: 'documents every field with .describe()',
      run: async () => {
        const definition = asDefinition(value);
        const properties = jsonSchemaOf(definition).properties ?? {};
        const undocumented = Object.entries(properties)
          .filter(([, field]) => typeof field.description !== 'string' || field.description.trim() === '')
          .map(([name]) => name);
        assert.deepEqual(undocumented, [], `fields without a .describe() text: ${undocumented.join(', ')}`);
      },
    },
  ];
}

function packageChecks(value: unknown, packageJson: object): ConformanceCheck[] {
  const manifest = packageJson as {
    holdfast?: { kind?: unknown; id?: unknown };
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  return [
    {
      group: 'package.json',
      name: 'has a holdfast block matching kind and id',
      run: async () => {
        const definition = asDefinition(value);
        assert.ok(manifest.holdfast, 'package.json has no "holdfast": { "kind", "id" } block, so discovery cannot find it');
        assert.equal(manifest.holdfast.kind, definition.kind, 'package.json holdfast.kind differs from the definition');
        assert.equal(manifest.holdfast.id, definition.id, 'package.json holdfast.id differs from the definition');
      },
    },
    {
      group: 'package.json',
      name: 'takes @holdfast/sdk as a peer and nothing of the kernel directly',
      run: async () => {
        assert.ok(manifest.peerDependencies?.['@holdfast/sdk'], '@holdfast/sdk must be a peerDependency');
        const direct = Object.keys(manifest.dependencies ?? {}).filter((name) => FORBIDDEN_DEPENDENCIES.includes(name));
        assert.deepEqual(direct, [], `import these through @holdfast/sdk instead: ${direct.join(', ')}`);
      },
    },
  ];
}

/** Counts outgoing socket connects while `work` runs (instantiation must stay lazy). */
async function countConnects(work: () => unknown): Promise<number> {
  const original = Socket.prototype.connect;
  let connects = 0;
  Socket.prototype.connect = function patched(this: Socket, ...args: unknown[]) {
    connects++;
    return (original as (...a: unknown[]) => Socket).apply(this, args);
  } as typeof original;
  try {
    work();
    // A connect started from a constructor may be scheduled; give it one turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    Socket.prototype.connect = original;
  }
  return connects;
}

function instantiationCheck(value: unknown, sampleConfig: unknown): ConformanceCheck {
  return {
    group: 'instantiation',
    name: 'resolves with the sample config through instantiateAdapter without connecting',
    run: async () => {
      const definition = asDefinition(value);
      let instance: unknown;
      const connects = await countConnects(() => {
        instance = createAdapterInstance(definition, sampleConfig);
      });
      assert.ok(typeof instance === 'object' && instance !== null, 'instantiateAdapter did not return an instance');
      assert.equal(connects, 0, 'the constructor opened a network connection; connect lazily on first use');
      await (instance as { dispose?: () => Promise<void> }).dispose?.();
    },
  };
}

/** The definition checks as a list, for running programmatically. */
export function adapterDefinitionChecks(definition: unknown, options: AdapterDefinitionSuiteOptions = {}): ConformanceCheck[] {
  return [
    ...identityChecks(definition),
    ...schemaChecks(definition),
    ...(options.packageJson ? packageChecks(definition, options.packageJson) : []),
    ...(options.sampleConfig !== undefined ? [instantiationCheck(definition, options.sampleConfig)] : []),
  ];
}

/** Registers the definition conformance checks (brand, id, schema, package.json, lazy instantiation) with vitest. */
export function describeAdapterDefinition(definition: unknown, options: AdapterDefinitionSuiteOptions = {}): void {
  const id = (definition as { kind?: string; id?: string } | null) ?? {};
  const skipped = [
    ...(options.packageJson ? [] : [{ group: 'package.json', name: 'package.json holdfast block and dependencies', reason: 'no packageJson given' }]),
    ...(options.sampleConfig !== undefined ? [] : [{ group: 'instantiation', name: 'resolves lazily through instantiateAdapter', reason: 'no sampleConfig given' }]),
  ];
  registerChecks(`adapter definition ${id.kind ?? '?'}-${id.id ?? '?'}`, adapterDefinitionChecks(definition, options), skipped);
}
