// Decompression stages for the recovery kit's point-in-time restore: gzip and brotli from Node's zlib, zstd from zlib
// when this Node.js has it (22.15 and newer), else from the `zstd` program, as `extract` does.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { Duplex, PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { EXIT, KitError, MAGIC, checkHeaderStart, createDecrypter } from './hfenc.mjs';

const CODECS = new Set(['none', 'gzip', 'brotli', 'zstd']);
const hasNativeZstd = () => typeof zlib.createZstdDecompress === 'function';

/** The codec of a stored object from its name's extension (`.gz`, `.br`, `.zst`, none), before any `.enc`. */
export function codecOfName(name) {
  const plain = name.endsWith('.enc') ? name.slice(0, -4) : name;
  if (plain.endsWith('.gz')) return 'gzip';
  if (plain.endsWith('.br')) return 'brotli';
  if (plain.endsWith('.zst')) return 'zstd';
  return 'none';
}

/** A codec as the sidecar writes it (`"GZIP"`, `{ codec: "ZSTD" }`), lower-cased; undefined when it names none. */
export function codecOfSidecar(meta) {
  const raw = typeof meta?.compression === 'string' ? meta.compression : meta?.compression?.codec;
  if (typeof raw !== 'string') return undefined;
  const codec = raw.toLowerCase();
  if (!CODECS.has(codec)) throw new KitError(EXIT.damaged, `the sidecar names an unknown compression "${raw}"`);
  return codec;
}

/** Fails before anything is written when zstd data is ahead and nothing here decodes it. */
export function ensureDecoder(codec) {
  if (codec !== 'zstd' || hasNativeZstd()) return;
  const probe = spawnSync('zstd', ['--version'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) {
    throw new KitError(
      EXIT.decompress,
      'this backup is zstd-compressed, and neither this Node.js (zstd is built in from 22.15) nor the zstd program is ' +
        'available: install zstd (apt install zstd, brew install zstd) or run the script with a newer Node.js',
    );
  }
}

/**
 * A decompressing stage for `codec`: `stream` goes into a pipeline, and `finished` settles when the decoder is done
 * (for the zstd program: when it exited, so a failure it reports after its last output byte is not missed).
 * Failures carry `isDecompression`, so callers can tell them from damage to the encrypted file.
 */
export function decompressor(codec) {
  if (codec === 'none') return { stream: new PassThrough(), finished: Promise.resolve() };
  if (codec === 'zstd' && !hasNativeZstd()) return zstdProgram();
  const stream = codec === 'gzip' ? zlib.createGunzip() : codec === 'brotli' ? zlib.createBrotliDecompress() : zlib.createZstdDecompress();
  stream.on('error', (error) => (error.isDecompression = true));
  return { stream, finished: Promise.resolve() };
}

function zstdProgram() {
  const child = spawn('zstd', ['-d', '-c', '-q'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (data) => (stderr = `${stderr}${data}`.slice(-2000)));
  const stream = Duplex.from({ writable: child.stdin, readable: child.stdout });
  const finished = new Promise((resolve, reject) => {
    child.on('error', (error) => reject(Object.assign(error, { isDecompression: true })));
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(Object.assign(new Error(`zstd exited with ${code ?? signal}: ${stderr.trim()}`), { isDecompression: true }));
    });
  });
  // A failed pipeline stops zstd too; its own verdict still comes through `finished`.
  stream.on('error', () => child.kill());
  return { stream, finished };
}

/** The kit's error for a failed decode: kit errors as they are, decoder failures as such, the rest as I/O. */
export function decodeError(error, codec, label) {
  if (error instanceof KitError) return error;
  if (error.isDecompression) return new KitError(EXIT.decompress, `${label}: ${codec} decompression failed: ${error.message}`);
  return new KitError(EXIT.io, `${label}: ${error.code ?? 'I/O error'}: ${error.message}`);
}

/**
 * Streams the plain bytes of a stored file into `sink` (a Writable, or an async function consuming the bytes as a
 * pipeline's last stage): decrypted when it is an HFENC file (`key()` is asked for then), then decompressed.
 */
export async function decodeFile(path, { key, codec, sink, label = path }) {
  const encrypted = isHfencFile(path);
  const { stream, finished } = decompressor(codec);
  // Whichever fails first is the one reported; the other's rejection must not go unhandled.
  const done = finished.catch((error) => error);
  try {
    await pipeline([createReadStream(path), ...(encrypted ? [createDecrypter(key())] : []), stream, sink]);
    const failure = await done;
    if (failure) throw failure;
  } catch (error) {
    stream.destroy();
    const decoderFailure = error.isDecompression ? undefined : await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 200))]);
    // A broken pipe only says zstd stopped reading; its exit status says why.
    const isPipeError = ['EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED'].includes(error.code);
    throw decodeError(isPipeError && decoderFailure ? decoderFailure : error, codec, label);
  }
}

/** True when the file starts with the HFENC magic; an age file (a public-key profile) is refused with its tool named. */
export function isHfencFile(path) {
  const start = Buffer.alloc(MAGIC.length);
  const handle = openSync(path, 'r');
  let bytesRead;
  try {
    bytesRead = readSync(handle, start, 0, start.length, 0);
  } finally {
    closeSync(handle);
  }
  if (bytesRead === MAGIC.length && start.equals(MAGIC)) return true;
  if (path.endsWith('.enc')) checkHeaderStart(start.subarray(0, bytesRead));
  return false;
}
