// peekHead reads a restore stream's first bytes (a format's magic) and hands back the whole stream. Aborting a
// restore destroys that stream while its source is still waiting for data: it must end at once (and end the
// source), not wait for a chunk that never comes. On Node 24 a Readable.from(generator) waited forever here.
import { once } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { peekHead } from '../src/index.js';

describe('peekHead', () => {
  it('returns the head and the whole stream, head included', async () => {
    const source = Readable.from([Buffer.from('TA'), Buffer.from('PE rest'), Buffer.from(' of it')], { objectMode: false });
    const { head, whole } = await peekHead(source, 4);
    expect(head.subarray(0, 4).toString()).toBe('TAPE');
    const chunks: Buffer[] = [];
    for await (const chunk of whole) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('TAPE rest of it');
  });

  it('ends at once when destroyed while the source waits for data, and destroys the source', async () => {
    const source = new PassThrough();
    source.write(Buffer.from('TAPE and more'));
    const { whole } = await peekHead(source, 4);
    whole.resume();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const closed = once(whole, 'close');
    whole.destroy();
    const outcome = await Promise.race([closed.then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('hung'), 2000))]);
    expect(outcome).toBe('closed');
    expect(source.destroyed).toBe(true);
  });

  it('reads until a test of the head holds, or up to a limit', async () => {
    const chunks = () => Readable.from([Buffer.from('ab'), Buffer.from('cd;'), Buffer.from('ef'), Buffer.from('gh')], { objectMode: false });
    const untilSemicolon = await peekHead(chunks(), { enough: (head) => head.includes(0x3b), limit: 100 });
    expect(untilSemicolon.head.toString()).toBe('abcd;');
    const limited = await peekHead(chunks(), { enough: () => false, limit: 6 });
    expect(limited.head.toString()).toBe('abcd;ef');
    const rest: Buffer[] = [];
    for await (const chunk of limited.whole) rest.push(chunk as Buffer);
    expect(Buffer.concat(rest).toString()).toBe('abcd;efgh');
  });

  it('passes a source error on', async () => {
    const source = new PassThrough();
    source.write(Buffer.from('TAPE'));
    const { whole } = await peekHead(source, 4);
    const failed = once(whole, 'error');
    whole.resume();
    source.destroy(new Error('disk gone'));
    const [error] = await failed;
    expect((error as Error).message).toBe('disk gone');
  });
});
