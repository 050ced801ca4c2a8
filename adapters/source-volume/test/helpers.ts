import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { createAdapterInstance } from '@holdfast/testkit';
import type { SourceAdapter } from '@holdfast/sdk';
import definition from '../src/index.js';

/** A source built from a raw config, as the server builds it. */
export function volumeSource(config: Record<string, unknown>): SourceAdapter {
  return createAdapterInstance<SourceAdapter>(definition, config);
}

/** Reads a stream to its end. */
export async function drain(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A tar (as the archive endpoint writes it) with the given members and contents. */
export async function tarOf(members: Record<string, string>): Promise<Readable> {
  const pack = tar.pack();
  for (const [name, content] of Object.entries(members)) pack.entry({ name }, content);
  pack.finalize();
  return Readable.from(await drain(pack as unknown as Readable));
}
