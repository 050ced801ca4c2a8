import { describe, expect, it } from 'vitest';
import { TOKENS, defineStorageAdapter, inject, injectable, z } from '@holdfast/sdk';
import { connect } from 'node:net';
import { adapterDefinitionChecks, describeAdapterDefinition, type AdapterDefinitionSuiteOptions } from '../src/index.js';
import { fixtureStorage } from './fixtures/fixture-storage.js';

const packageJson = { holdfast: { kind: 'storage', id: 'fixture-fs' }, peerDependencies: { '@holdfast/sdk': '^0.1.0' } };

async function failures(definition: unknown, options: AdapterDefinitionSuiteOptions = {}): Promise<string[]> {
  const messages: string[] = [];
  for (const check of adapterDefinitionChecks(definition, options)) {
    await check.run().catch((error: Error) => messages.push(`${check.name}: ${error.message}`));
  }
  return messages;
}

@injectable()
class EagerStorage {
  constructor(@inject(TOKENS.AdapterConfig) config: { port: number }) {
    // Deliberately wrong: connects while being constructed.
    connect(config.port, '127.0.0.1').on('error', () => undefined);
  }
}

const capabilities = { rangeReads: false, serverChecksum: false, parallelMetadataReads: false, symlinks: false, maxParallelParts: 1 };

describeAdapterDefinition(fixtureStorage, { packageJson, sampleConfig: { root: '/tmp' } });

describe('the definition suite catches broken definitions', () => {
  it('passes the correct fixture with every group', async () => {
    expect(await failures(fixtureStorage, { packageJson, sampleConfig: { root: '/tmp' } })).toEqual([]);
  });

  it('an unbranded, unfrozen object with a bad id', async () => {
    const fake = { ...fixtureStorage, brand: 'other', id: 'Bad_Id' };
    const found = await failures(fake);
    expect(found.join('\n')).toContain('brand must be "holdfast.adapter"');
    expect(found.join('\n')).toContain('id "Bad_Id" is not kebab-case');
    expect(found.join('\n')).toContain('the definition object must be frozen');
  });

  it('a field without a description and a schema that cannot become JSON Schema', async () => {
    const undocumented = defineStorageAdapter({
      id: 'undocumented',
      displayName: 'Undocumented',
      configSchema: z.object({ root: z.string().describe('ok'), secretless: z.string() }),
      capabilities,
      implementation: EagerStorage as never,
    });
    expect((await failures(undocumented)).join('\n')).toContain('fields without a .describe() text: secretless');
    const transformed = defineStorageAdapter({
      id: 'transformed',
      displayName: 'Transformed',
      configSchema: z.object({ when: z.date().describe('a Date has no JSON Schema form') }),
      capabilities,
      implementation: EagerStorage as never,
    });
    expect((await failures(transformed)).join('\n')).toContain('z.toJSONSchema(configSchema) failed');
  });

  it('a package.json that names another adapter or depends on the kernel', async () => {
    const wrong = { holdfast: { kind: 'storage', id: 'other' }, peerDependencies: { '@holdfast/sdk': '^0.1.0' }, dependencies: { zod: '4.6.7' } };
    const found = (await failures(fixtureStorage, { packageJson: wrong })).join('\n');
    expect(found).toContain('package.json holdfast.id differs from the definition');
    expect(found).toContain('import these through @holdfast/sdk instead: zod');
  });

  it('a constructor that connects', async () => {
    const eager = defineStorageAdapter({
      id: 'eager',
      displayName: 'Eager',
      configSchema: z.object({ port: z.number().describe('port') }),
      capabilities,
      implementation: EagerStorage as never,
    });
    expect((await failures(eager, { sampleConfig: { port: 9 } })).join('\n')).toContain('the constructor opened a network connection');
  });

  it('missing capabilities of the kind', async () => {
    const partial = defineStorageAdapter({
      id: 'partial',
      displayName: 'Partial',
      configSchema: z.object({}),
      capabilities: { rangeReads: true } as never,
      implementation: EagerStorage as never,
    });
    expect((await failures(partial)).join('\n')).toContain('capabilities.serverChecksum must be a boolean');
  });
});
