// The server's side of agent calls without a socket: what is sent, what closes the connection, how calls end.
import { describe, expect, it } from 'vitest';
import { CallChannel } from '../src/calls/call-channel.js';
import { agentCallFrame, dataFrame, MAX_LOG_LINES_PER_CALL, MAX_LOG_MESSAGE_CHARS } from '../src/protocol.js';

function channel() {
  const sent: any[] = [];
  const binary: Buffer[] = [];
  const errors: string[] = [];
  const calls = new CallChannel({ sendText: (frame) => sent.push(frame), sendBinary: (frame) => binary.push(frame), bufferedAmount: () => 0, protocolError: (reason) => errors.push(reason) });
  return { calls, sent, binary, errors };
}

const request = { method: 'dump' as const, adapterId: 'postgres', config: { password: 'p' }, credentials: {}, options: { databases: [] }, output: true };

describe('agent call channel', () => {
  it('streams a dump: credit first, bytes within it, end, then the stats', async () => {
    const { calls, sent, errors } = channel();
    const handle = calls.start(request);
    expect(sent[0]).toMatchObject({ type: 'call', id: 1, method: 'dump', config: { password: 'p' } });
    expect(sent[1]).toEqual({ type: 'credit', id: 1, bytes: 1024 * 1024 });
    calls.onText({ type: 'opened', id: 1, extension: '.dump' });
    const { stream, extension } = await handle.opened;
    expect(extension).toBe('.dump');
    calls.onBinary(dataFrame(1, Buffer.from('hello ')));
    calls.onBinary(dataFrame(1, Buffer.from('world')));
    calls.onText({ type: 'end', id: 1 });
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('hello world');
    calls.onText({ type: 'result', id: 1, value: { bytes: 11, databases: [], warnings: [] } });
    expect(await handle.result).toEqual({ bytes: 11, databases: [], warnings: [] });
    expect(errors).toEqual([]);
  });

  it('cancels the call on the agent when the reader destroys the stream, and when the signal aborts', async () => {
    const { calls, sent, errors } = channel();
    const handle = calls.start(request);
    calls.onText({ type: 'opened', id: 1, extension: '.dump' });
    (await handle.opened).stream.destroy();
    await expect(handle.result).rejects.toMatchObject({ code: 'ABORTED' });
    expect(sent.at(-1)).toEqual({ type: 'cancel', id: 1 });
    // A late frame of the cancelled call is dropped, not a protocol error.
    calls.onText({ type: 'error', id: 1, message: 'cancelled by the server' });
    calls.onBinary(dataFrame(1, Buffer.from('late bytes')));
    expect(errors).toEqual([]);
    const abort = new AbortController();
    const second = calls.start({ ...request, signal: abort.signal });
    abort.abort();
    await expect(second.result).rejects.toMatchObject({ code: 'ABORTED' });
    expect(sent.at(-1)).toEqual({ type: 'cancel', id: 2 });
  });

  it('closes the connection for frames of calls never made or streams never opened, and fails calls when it closes', async () => {
    const { calls, errors } = channel();
    calls.onText({ type: 'result', id: 1, value: null });
    calls.onBinary(dataFrame(5, Buffer.from('x')));
    calls.onBinary(Buffer.from([1, 2]));
    expect(errors).toHaveLength(3);
    const check = calls.start({ ...request, method: 'check', output: false });
    calls.onBinary(dataFrame(1, Buffer.from('x')));
    expect(errors.at(-1)).toMatch(/unexpected data for call 1/);
    calls.closed((method) => new Error(`interrupted: agent "a" disconnected during ${method}`));
    await expect(check.result).rejects.toThrow('interrupted: agent "a" disconnected during check');
    // Later calls on a closed channel fail the same way at once.
    await expect(calls.start({ ...request, method: 'listDatabases', output: false }).result).rejects.toThrow('during listDatabases');
  });

  it('passes a call\'s log lines to its listener, at most MAX_LOG_LINES_PER_CALL, and refuses them for calls never made', async () => {
    const { calls, errors } = channel();
    const lines: string[] = [];
    const handle = calls.start({ ...request, output: false, method: 'check', onLog: (level, message) => lines.push(`${level} ${message}`) });
    calls.onText({ type: 'log', id: 1, level: 'info', message: 'starting pg_dump' });
    for (let index = 0; index < MAX_LOG_LINES_PER_CALL + 50; index += 1) calls.onText({ type: 'log', id: 1, level: 'warn', message: `line ${index}` });
    expect(lines[0]).toBe('info starting pg_dump');
    expect(lines).toHaveLength(MAX_LOG_LINES_PER_CALL);
    calls.onText({ type: 'result', id: 1, value: { ok: true } });
    await handle.result;
    expect(errors).toEqual([]);
    // A line for a call that ended is dropped; for a call never made it is a protocol error.
    calls.onText({ type: 'log', id: 1, level: 'info', message: 'late' });
    expect(lines).toHaveLength(MAX_LOG_LINES_PER_CALL);
    calls.onText({ type: 'log', id: 9, level: 'info', message: 'never asked' });
    expect(errors).toEqual(['protocol error: log frame for call 9, which the server never made']);
    // The frame schema bounds the message and the level.
    expect(agentCallFrame.safeParse({ type: 'log', id: 1, level: 'info', message: 'x'.repeat(MAX_LOG_MESSAGE_CHARS + 1) }).success).toBe(false);
    expect(agentCallFrame.safeParse({ type: 'log', id: 1, level: 'fatal', message: 'x' }).success).toBe(false);
    expect(agentCallFrame.safeParse({ type: 'log', id: 1, level: 'warn', message: 'x', extra: 1 }).success).toBe(false);
  });
});
