// ZSTD uses two N-API bindings, each for what the other lacks. Both ship prebuilt binaries inside their npm packages
// (nothing is compiled or downloaded at install), and Node 20's zlib has no zstd.
// - @mongodb-js/zstd compresses one buffer per call on libuv's thread pool (an asynchronous call, like zlib's), so
//   frames are compressed off the main thread without worker threads. A worker thread costs its own V8 isolate and
//   Node environment, about 7 MiB each, and booting two of them at a backup's start is where the directory ZSTD
//   backups that peaked over 150 MiB diverged (docs/benchmarks.md, session 15).
// - @cloudpss/zstd decompresses as a stream: a restore reads frames of any size piece by piece. It has no
//   asynchronous API, which is why it no longer compresses.
// Each is loaded once and guarded, so a platform without a prebuild loses ZSTD only, with a clear error, instead of
// failing to load the whole engine.
import { createRequire } from 'node:module';

type Decoder = typeof import('@cloudpss/zstd/napi');
/** The native entry point of @mongodb-js/zstd: its `index.js` wrapper drops the level argument. */
interface Encoder {
  compress(data: Buffer, level?: number): Promise<Buffer>;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const decoder: { module?: Decoder; loadError?: string } = await import('@cloudpss/zstd/napi').then(
  (module: Decoder) => ({ module }),
  (error: unknown) => ({ loadError: describe(error) }),
);

const encoder: { module?: Encoder; loadError?: string } = (() => {
  try {
    return { module: createRequire(import.meta.url)('@mongodb-js/zstd/bindings.js') as Encoder };
  } catch (error) {
    return { loadError: describe(error) };
  }
})();

function unavailable(reason: string | undefined): Error {
  return new Error(`ZSTD compression is not available on this platform (${process.platform}-${process.arch}): ${reason}`);
}

/** True when both bindings loaded. */
export function zstdAvailable(): boolean {
  return decoder.module !== undefined && encoder.module !== undefined;
}

/** The streaming decoder's module; throws a clear error where ZSTD is unavailable. */
export function zstdDecoder(): Decoder {
  if (!encoder.module) throw unavailable(encoder.loadError);
  if (!decoder.module) throw unavailable(decoder.loadError);
  return decoder.module;
}

/** Compresses `input` into one complete zstd frame on libuv's thread pool. */
export function compressZstdFrame(input: Buffer, level: number): Promise<Buffer> {
  if (!encoder.module) return Promise.reject(unavailable(encoder.loadError));
  return encoder.module.compress(input, level);
}
