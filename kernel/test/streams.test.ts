import { createHash, randomBytes } from 'node:crypto';
import { PassThrough, Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  abortablePipeline,
  awaitFirstByte,
  createByteCounter,
  createHashingPassThrough,
  isAbortError,
} from '../src/index.js';

function sink(): Writable & { chunks: Buffer[] } {
  const chunks: Buffer[] = [];
  return Object.assign(
    new Writable({
      write(chunk, _enc, cb) {
        chunks.push(chunk);
        cb();
      },
    }),
    { chunks },
  );
}

describe('stream helpers', () => {
  it('hashes SHA-256 and MD5 in one pass and counts bytes', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 7);
    const hashing = createHashingPassThrough();
    const progress: number[] = [];
    const counter = createByteCounter((bytes) => progress.push(bytes), data.length, 0);
    const out = sink();
    await abortablePipeline(undefined, Readable.from([data.subarray(0, 1000), data.subarray(1000)]), hashing, counter, out);
    expect(hashing.digests()).toEqual({
      sha256: createHash('sha256').update(data).digest('hex'),
      md5: createHash('md5').update(data).digest('hex'),
      bytes: data.length,
    });
    expect(counter.bytes).toBe(data.length);
    expect(progress.at(-1)).toBe(data.length);
    expect(Buffer.concat(out.chunks).equals(data)).toBe(true);
  });

  it('refuses digests of a stream that did not finish', () => {
    expect(() => createHashingPassThrough().digests()).toThrow(/before the stream finished/);
  });

  it('aborting the pipeline destroys the stages and rejects with an abort error', async () => {
    const controller = new AbortController();
    const source = new PassThrough();
    const run = abortablePipeline(controller.signal, source, sink());
    source.write('some');
    controller.abort();
    await expect(run).rejects.toSatisfy(isAbortError);
    expect(source.destroyed).toBe(true);
  });

  it('awaitFirstByte resolves on data without consuming it and rejects on an early error', async () => {
    const ok = new PassThrough();
    setTimeout(() => ok.end('payload'), 5);
    await expect(awaitFirstByte(ok)).resolves.toBe('data');
    const out = sink();
    await abortablePipeline(undefined, ok, out);
    expect(Buffer.concat(out.chunks).toString()).toBe('payload');

    const broken = new PassThrough();
    setTimeout(() => broken.destroy(new Error('connection refused')), 5);
    await expect(awaitFirstByte(broken)).rejects.toThrow('connection refused');

    const empty = new PassThrough();
    setTimeout(() => empty.end(), 5);
    await expect(awaitFirstByte(empty)).resolves.toBe('end');
  });

  it('awaitFirstByte can wait twice on one stream (the second wait hung on the pause of the first)', async () => {
    const twice = new PassThrough();
    setTimeout(() => twice.end('payload'), 5);
    await expect(awaitFirstByte(twice)).resolves.toBe('data');
    await expect(awaitFirstByte(twice)).resolves.toBe('data');
    const out = sink();
    await abortablePipeline(undefined, twice, out);
    expect(Buffer.concat(out.chunks).toString()).toBe('payload');
  });
});
