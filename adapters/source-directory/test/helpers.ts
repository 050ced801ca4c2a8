import { Readable } from 'node:stream';
import tar from 'tar-stream';
import type { DumpOptions, DumpStats, SourceAdapter } from '@holdfast/sdk';
import { createAdapterInstance } from '@holdfast/testkit';
import definition from '../src/index.js';

/** A source instance for `config`. */
export function directorySource(config: Record<string, unknown>): SourceAdapter {
  return createAdapterInstance<SourceAdapter>(definition, config);
}

/** Dumps into memory (test-sized trees only) and returns the tar bytes with the done stats. */
export async function dumpToBuffer(source: SourceAdapter, options: Partial<DumpOptions> = {}): Promise<{ archive: Buffer; stats: DumpStats }> {
  const handle = await source.dump({ databases: [], signal: new AbortController().signal, ...options });
  const chunks: Buffer[] = [];
  for await (const chunk of handle.stream) chunks.push(chunk as Buffer);
  return { archive: Buffer.concat(chunks), stats: await handle.done };
}

/** Member names and types of a tar, in archive order. */
export async function membersOf(archive: Buffer): Promise<{ name: string; type: string; linkname?: string | null }[]> {
  const extract = tar.extract();
  const members: { name: string; type: string; linkname?: string | null }[] = [];
  const feeding = (async () => extract.end(archive))();
  for await (const entry of extract) {
    members.push({ name: entry.header.name, type: String(entry.header.type), linkname: entry.header.linkname });
    entry.resume();
  }
  await feeding;
  return members;
}

/** Builds a tar from hand-written entries (for crafted archives). */
export async function craftTar(entries: { name: string; type?: 'file' | 'symlink' | 'directory' | 'link'; linkname?: string; body?: string }[]): Promise<Readable> {
  const pack = tar.pack();
  // Read while the entries go in: a pack that nobody reads stops calling back once its buffer is full.
  const chunks: Buffer[] = [];
  const read = (async () => {
    for await (const chunk of pack as AsyncIterable<Buffer>) chunks.push(chunk);
  })();
  for (const entry of entries) {
    const type = entry.type ?? 'file';
    await new Promise<void>((resolve, reject) =>
      pack.entry({ name: entry.name, type, linkname: entry.linkname, mode: 0o644 }, type === 'file' ? (entry.body ?? 'x') : undefined, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
  }
  pack.finalize();
  await read;
  return Readable.from([Buffer.concat(chunks)]);
}
