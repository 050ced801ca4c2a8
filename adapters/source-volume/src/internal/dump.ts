import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { DumpHandle, DumpStats } from '@holdfast/sdk';
import { MOUNT_PATH } from './docker.js';
import { aborted, volumeError } from './errors.js';
import { HelperSession, type SessionPlan } from './session.js';

/**
 * Starts the tar stream of one volume: stops its users (when asked), creates a helper container with the volume
 * mounted read-only and streams `GET /containers/{id}/archive?path=/volume`. Everything up to the response status
 * happens before this resolves, so an unreachable Engine, a missing volume or a failed stop rejects `dump()` itself.
 * `done` settles after the stream ended (or failed, or was aborted) AND the helper is removed and the stopped
 * containers are started again.
 */
export async function startVolumeDump(plan: SessionPlan & { signal: AbortSignal; engineVersion?: string }): Promise<DumpHandle> {
  if (plan.signal.aborted) throw aborted('dump');
  const session = await HelperSession.open({ ...plan, readOnly: true });
  let response;
  try {
    response = await plan.api.stream('GET', `/containers/${session.helperId}/archive?path=${encodeURIComponent(MOUNT_PATH)}`, plan.signal);
  } catch (error) {
    await session.close();
    throw plan.signal.aborted ? aborted('dump') : error;
  }

  let bytes = 0;
  // A consumer that stops early destroys the stream without an error; a broken download destroys it with one.
  let consumerGone = false;
  const stream = new Transform({
    highWaterMark: 1024 * 1024,
    destroy(error, callback) {
      if (!error && !this.readableEnded) consumerGone = true;
      callback(error);
    },
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      callback(null, chunk);
    },
  });
  let settle!: { resolve: (stats: DumpStats) => void; reject: (error: unknown) => void };
  const done = new Promise<DumpStats>((resolve, reject) => (settle = { resolve, reject }));
  done.catch(() => undefined);
  let finished = false;
  const finish = (error?: Error) => {
    if (finished) return;
    finished = true;
    plan.signal.removeEventListener('abort', onAbort);
    // The cleanup runs before done settles, so a caller awaiting done sees the Engine back in its prior state.
    void session.close().then((warnings) => {
      if (error) settle.reject(error);
      else settle.resolve({ bytes, databases: [plan.volume], engineVersion: plan.engineVersion, warnings });
    });
  };
  const onAbort = () => {
    const error = aborted('dump');
    response.destroy(error);
    stream.destroy(error);
    finish(error);
  };
  plan.signal.addEventListener('abort', onAbort, { once: true });

  pipeline(response, stream).then(
    () => {
      // All bytes went into the stream; done waits until the consumer read them (or went away).
      if (stream.readableEnded) finish();
      else {
        stream.once('end', () => finish());
        stream.once('close', () => finish(stream.readableEnded ? undefined : aborted('dump (stream closed before it ended)')));
      }
    },
    (error: unknown) => {
      if (plan.signal.aborted) return finish(aborted('dump'));
      const wrapped = consumerGone
        ? aborted('dump (stream closed before it ended)')
        : volumeError('TRANSIENT', `the archive stream of volume ${plan.volume} broke off: ${(error as Error).message}`);
      stream.destroy(wrapped);
      finish(wrapped);
    },
  );
  return { stream, done, extension: '.tar' };
}
