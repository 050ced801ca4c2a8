// ZSTD uses two N-API bindings, each for what the other lacks. Both ship prebuilt binaries inside npm packages
// (nothing is compiled or downloaded at install), and Node 20's zlib has no zstd.
// - @toondepauw/node-zstd compresses one buffer per call on libuv's thread pool (an asynchronous call, like zlib's), so
//   frames are compressed off the main thread without worker threads. A worker thread costs its own V8 isolate and
//   Node environment, about 7 MiB each, and booting two of them at a backup's start is where the directory ZSTD
//   backups that peaked over 150 MiB diverged (docs/benchmarks.md, session 15). It replaced @mongodb-js/zstd 1.2.2,
//   whose older zstd needed 48 % more CPU for the same level 3 frames (docs/benchmarks.md, session 17).
// - @cloudpss/zstd decompresses as a stream: a restore reads frames of any size piece by piece. It has no
//   asynchronous API, which is why it does not compress.
// Each is loaded once and guarded, so a platform without a prebuild loses ZSTD only, with a clear error, instead of
// failing to load the whole engine.
import { createRequire } from 'node:module';

type Decoder = typeof import('@cloudpss/zstd/napi');
type EncoderModule = typeof import('@toondepauw/node-zstd');
type Encoder = InstanceType<EncoderModule['Encoder']>;

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const decoder: { module?: Decoder; loadError?: string } = await import('@cloudpss/zstd/napi').then(
  (module: Decoder) => ({ module }),
  (error: unknown) => ({ loadError: describe(error) }),
);

const encoder: { module?: EncoderModule; loadError?: string } = (() => {
  try {
    return { module: createRequire(import.meta.url)('@toondepauw/node-zstd') as EncoderModule };
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

/**
 * One encoder per level, shared by every stream: an encoder holds only its level (each call compresses with a context
 * of its own, so calls from several streams at once do not share state; a test compares them with one at a time).
 */
const encodersByLevel = new Map<number, Encoder>();

/** Compresses `input` into one complete zstd frame on libuv's thread pool. */
export function compressZstdFrame(input: Buffer, level: number): Promise<Buffer> {
  if (!encoder.module) return Promise.reject(unavailable(encoder.loadError));
  let levelEncoder = encodersByLevel.get(level);
  if (!levelEncoder) {
    levelEncoder = new encoder.module.Encoder(level);
    encodersByLevel.set(level, levelEncoder);
  }
  return levelEncoder.encode(input);
}
