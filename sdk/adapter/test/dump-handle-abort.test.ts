// Cancelling a run aborts the dump's signal. A consumer that already gave up on the stream has removed its 'error'
// listener: the abort must then end the dump quietly (its `done` rejects as ABORTED) instead of emitting an 'error'
// nobody hears, which Node turns into an uncaught exception that stops the server.
import { describe, expect, it } from 'vitest';
import { isAdapterError, toDumpHandle } from '../src/index.js';

async function* endless(): AsyncGenerator<Buffer> {
  for (;;) {
    yield Buffer.alloc(64 * 1024, 1);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const handle = (signal: AbortSignal) => toDumpHandle(endless(), { origin: { kind: 'source', id: 'example' }, signal, databases: ['db'], extension: '.dump' });

async function escapesOf(run: () => Promise<void>): Promise<string[]> {
  const escaped: string[] = [];
  const record = (error: unknown) => void escaped.push(String(error));
  process.on('uncaughtException', record);
  try {
    await run();
    await new Promise((resolve) => setTimeout(resolve, 100));
    return escaped;
  } finally {
    process.off('uncaughtException', record);
  }
}

describe('toDumpHandle on abort', () => {
  it('with no one listening for errors: the stream closes quietly, done rejects ABORTED, nothing escapes', async () => {
    const abort = new AbortController();
    const dump = await handle(abort.signal);
    const escaped = await escapesOf(async () => {
      abort.abort();
      const failure = await dump.done.then(() => undefined, (error: unknown) => error);
      expect(isAdapterError(failure) && failure.code).toBe('ABORTED');
    });
    expect(escaped).toEqual([]);
    expect(dump.stream.destroyed).toBe(true);
  });

  it('with a reader listening: the reader gets the ABORTED error', async () => {
    const abort = new AbortController();
    const dump = await handle(abort.signal);
    const seen = new Promise<unknown>((resolve) => dump.stream.once('error', resolve));
    dump.stream.resume();
    abort.abort();
    const error = await seen;
    expect(isAdapterError(error) && error.code).toBe('ABORTED');
  });
});
