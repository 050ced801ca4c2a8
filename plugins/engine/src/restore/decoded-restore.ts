import { PassThrough, type Readable, type Transform, type Writable } from 'node:stream';
import { abortablePipeline, type DecodedRestoreInput, type RestoreOptions, type RestoreResult, type SourceAdapter } from '@holdfast/kernel';
import { ExternalDecoder } from '../codec/compression/external-decoder.js';
import type { ExternalCompressor } from '../codec/compression/external-compressor.js';

// How a write into a decoder that stopped reading fails: a consequence (of the decoder's own exit, reported with its
// status, or of the source's failure), never the cause of a restore's failure.
const DECODER_GONE_CODES = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED']);
const isDecoderGone = (error: unknown): boolean => DECODER_GONE_CODES.has((error as { code?: string } | null)?.code ?? '');

/** What a restore through the external decoder reads and where it goes. */
export interface DecodedRestorePlan {
  signal: AbortSignal;
  /** The stored file's stages up to the decoder: download, byte counter, SHA-256 gate, decryption. */
  stages: [Readable, ...Transform[]];
  decoder: ExternalCompressor;
  source: SourceAdapter;
  options: Omit<RestoreOptions, 'decodedInput'>;
}

/**
 * A restore whose source takes the decoded bytes as a pipe (SourceAdapter.acceptsDecodedInput, issue 42): the stored
 * bytes are checked and decrypted here, decoded by `zstd -d` / `pigz -d`, and the decoder writes either into the
 * source's own child process (`decodeInto`) or into a stream the source reads here (`open`). The decoder starts
 * when the source asks for it. The source commits only after `verified` resolved (every byte matched the sidecar's
 * SHA-256, the decoder exited 0). Both sides settle before this returns. When both failed, a failure of the stored
 * bytes (checksum, decryption, storage, cancel) that came first is reported, else the source's own: a decoder that
 * stopped because the source's process went away is a consequence, not the cause.
 */
export async function restoreThroughDecoder(plan: DecodedRestorePlan): Promise<RestoreResult> {
  let decoder: ExternalDecoder | undefined;
  let feeding: Promise<void> | undefined;
  let restoreFailed = false;
  let storedBytesFailedFirst: { error: unknown } | undefined;
  let settleVerified!: (outcome: Promise<void>) => void;
  const verified = new Promise<void>((resolve) => (settleVerified = resolve));
  verified.catch(() => undefined);

  const start = (output?: Writable): ExternalDecoder => {
    if (decoder) throw new Error('the decoded input of this restore was already started');
    const started = new ExternalDecoder(plan.decoder, output);
    decoder = started;
    const piping = abortablePipeline(plan.signal, ...plan.stages, started.stdin).catch((error: unknown) => {
      if (!restoreFailed && !isDecoderGone(error)) storedBytesFailedFirst ??= { error };
      throw error;
    });
    feeding = Promise.all([piping, started.exited]).then(() => undefined);
    // Whatever failed, the decoder stops, so its reader sees the end of its input instead of waiting.
    feeding.catch(() => started.kill());
    settleVerified(feeding);
    return started;
  };
  const decodedInput: DecodedRestoreInput = {
    decodeInto(sink: Writable): void {
      start(sink);
      // The decoder holds its own copy of the pipe: the source's child sees its end when the decoder exits.
      sink.destroy();
    },
    open(): Readable {
      return start().stdout;
    },
    verified,
  };
  const empty = new PassThrough();
  empty.end();
  const restoring = plan.source.restore(empty, { ...plan.options, decodedInput }).then(
    (result) => {
      // A source that read in this process and stopped early: the rest is read here, so the decoder can finish and
      // the SHA-256 of the whole stored file is still checked before the run reports.
      if (decoder && !decoder.writesIntoOutput) decoder.stdout.resume();
      return result;
    },
    (error: unknown) => {
      restoreFailed = true;
      decoder?.kill();
      throw error;
    },
  );
  const [restored, fed] = await Promise.allSettled([restoring, restoring.then(() => feeding, () => feeding)]);
  if (!decoder) {
    // The source never asked for the backup: nothing was read; the download is closed.
    plan.stages[0].destroy();
    if (restored.status === 'rejected') throw restored.reason;
    throw new Error('the source finished its restore without reading the backup');
  }
  if (storedBytesFailedFirst) throw storedBytesFailedFirst.error;
  if (restored.status === 'rejected') throw restored.reason;
  if (fed.status === 'rejected') throw fed.reason;
  return restored.value;
}
