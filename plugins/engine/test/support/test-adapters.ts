// TEST-ONLY ADAPTERS, registered by the tests, never shipped:
// - `source-generated`: produces N numbered text lines, optionally slowly (for crash, cancel and concurrency
//   drills), optionally with warnings or failing at connect; its restore writes what it receives to a file, or
//   stops reading early and fails or succeeds (a restore tool that quits without reading its whole input).
// - `storage-flaky`: a destination that accepts bytes and then refuses writes after `failAfterBytes` (the
//   "destination starts refusing writes mid-run" drill), standing in for a full disk or a dropped connection.
// - `storage-undeletable`: an in-memory destination whose deletes fail (a retention stage that cannot delete).
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import {
  AdapterError,
  defineSourceAdapter,
  defineStorageAdapter,
  inject,
  injectable,
  TOKENS,
  z,
  type DumpHandle,
  type DumpOptions,
  type RestoreOptions,
  type SourceAdapter,
  type StorageAdapter,
  type StorageObjectInfo,
} from '@holdfast/sdk';

const generatedConfig = z.object({
  lines: z.int().min(0).default(1000),
  delayMsPerChunk: z.int().min(0).default(0),
  linesPerChunk: z.int().min(1).default(100),
  warnings: z.array(z.string()).default([]),
  failAtConnect: z.string().optional(),
  restoreTo: z.string().optional(),
  /** The restore reads this many bytes, then stops reading and fails (`fail`) or reports success (`succeed`). */
  restoreStopsAfterBytes: z.int().min(0).optional(),
  restoreStopsWith: z.enum(['fail', 'succeed']).default('fail'),
});
type GeneratedConfig = z.output<typeof generatedConfig>;

@injectable()
class GeneratedSource implements SourceAdapter {
  constructor(@inject(TOKENS.AdapterConfig) private readonly config: GeneratedConfig) {}
  async check() {
    return { ok: true, message: 'generated' };
  }
  async detectVersion() {
    return { version: '1.0' };
  }
  async listDatabases() {
    return ['generated'];
  }
  async dump(options: DumpOptions): Promise<DumpHandle> {
    if (this.config.failAtConnect) throw new AdapterError('source-generated', 'AUTH', this.config.failAtConnect);
    const { lines, linesPerChunk, delayMsPerChunk, warnings } = this.config;
    const signal = options.signal;
    let settle!: (value: { bytes: number; databases: string[]; warnings: string[] }) => void;
    const done = new Promise<{ bytes: number; databases: string[]; warnings: string[] }>((resolve) => (settle = resolve));
    const stream = Readable.from(
      (async function* generate() {
        let bytes = 0;
        for (let start = 0; start < lines; start += linesPerChunk) {
          if (delayMsPerChunk) await delay(delayMsPerChunk, undefined, { signal });
          let text = '';
          for (let line = start; line < Math.min(lines, start + linesPerChunk); line++) text += `line ${line}\n`;
          bytes += text.length;
          yield Buffer.from(text);
        }
        settle({ bytes, databases: ['generated'], warnings });
      })(),
    );
    return { stream, done, extension: '.txt' };
  }
  async restore(stream: Readable, options: RestoreOptions) {
    const stopAfter = this.config.restoreStopsAfterBytes;
    if (stopAfter !== undefined) {
      // A restore tool that quits early (a client dying on a bad statement) and leaves its input unread.
      let seen = 0;
      const iterator = stream[Symbol.asyncIterator]();
      while (seen <= stopAfter) {
        const next = await iterator.next();
        if (next.done) break;
        seen += (next.value as Buffer).length;
      }
      if (this.config.restoreStopsWith === 'fail') throw new AdapterError('source-generated', 'TRANSIENT', `restore tool quit after ${seen} bytes`);
      return { warnings: [] };
    }
    if (!this.config.restoreTo) throw new Error('restoreTo not configured');
    await pipeline(stream, createWriteStream(this.config.restoreTo), { signal: options.signal });
    return { warnings: [] };
  }
}

/** Test-only source (see file header). */
export const generatedSource = defineSourceAdapter({
  id: 'generated',
  displayName: 'Generated lines (test only)',
  configSchema: generatedConfig,
  capabilities: { multipleDatabases: false, listDatabases: true, restore: true, fileArchive: false },
  implementation: GeneratedSource,
});

const flakyConfig = z.object({ failAfterBytes: z.int().min(0) });

@injectable()
class FlakyStorage implements StorageAdapter {
  constructor(@inject(TOKENS.AdapterConfig) private readonly config: z.output<typeof flakyConfig>) {}
  async check() {
    return { ok: true, message: 'flaky' };
  }
  async put(key: string, body: Readable) {
    let seen = 0;
    for await (const chunk of body) {
      seen += (chunk as Buffer).length;
      if (seen > this.config.failAfterBytes) {
        body.destroy();
        throw new AdapterError('storage-flaky', 'TRANSIENT', `write refused after ${this.config.failAfterBytes} bytes (disk full)`);
      }
    }
    return { key, size: seen };
  }
  async get(key: string): Promise<Readable> {
    throw new AdapterError('storage-flaky', 'NOT_FOUND', `${key} not found`);
  }
  async *list(): AsyncIterable<StorageObjectInfo> {}
  async stat(key: string): Promise<StorageObjectInfo> {
    throw new AdapterError('storage-flaky', 'NOT_FOUND', `${key} not found`);
  }
  async delete() {}
}

/** Test-only storage that refuses writes after N bytes (see file header). */
export const flakyStorage = defineStorageAdapter({
  id: 'flaky',
  displayName: 'Flaky destination (test only)',
  configSchema: flakyConfig,
  capabilities: { rangeReads: false, serverChecksum: false, parallelMetadataReads: false, symlinks: false, maxParallelParts: 1 },
  implementation: FlakyStorage,
});

const undeletableConfig = z.object({ label: z.string().default('undeletable') });

/** In-memory objects shared by every instance, so a test can inspect them. */
export const undeletableObjects = new Map<string, { data: Buffer; modifiedAt: Date }>();

@injectable()
class UndeletableStorage implements StorageAdapter {
  async check() {
    return { ok: true, message: 'undeletable' };
  }
  async put(key: string, body: Readable) {
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    const data = Buffer.concat(chunks);
    undeletableObjects.set(key, { data, modifiedAt: new Date() });
    return { key, size: data.length };
  }
  async get(key: string): Promise<Readable> {
    const object = undeletableObjects.get(key);
    if (!object) throw new AdapterError('storage-undeletable', 'NOT_FOUND', `${key} not found`);
    return Readable.from([object.data]);
  }
  async *list(prefix: string): AsyncIterable<StorageObjectInfo> {
    for (const [key, object] of undeletableObjects) {
      if (key.startsWith(prefix)) yield { key, size: object.data.length, modifiedAt: object.modifiedAt };
    }
  }
  async stat(key: string): Promise<StorageObjectInfo> {
    const object = undeletableObjects.get(key);
    if (!object) throw new AdapterError('storage-undeletable', 'NOT_FOUND', `${key} not found`);
    return { key, size: object.data.length, modifiedAt: object.modifiedAt };
  }
  async delete(key: string): Promise<void> {
    throw new AdapterError('storage-undeletable', 'AUTH', `deleting ${key} is not permitted (object lock)`);
  }
}

/** Test-only storage whose deletes always fail (see file header); small test backups only, it holds them in memory. */
export const undeletableStorage = defineStorageAdapter({
  id: 'undeletable',
  displayName: 'Undeletable destination (test only)',
  configSchema: undeletableConfig,
  capabilities: { rangeReads: false, serverChecksum: false, parallelMetadataReads: true, symlinks: false, maxParallelParts: 1 },
  implementation: UndeletableStorage,
});
