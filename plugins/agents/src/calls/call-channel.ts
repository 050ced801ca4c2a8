import type { Readable } from 'node:stream';
import { AdapterError, type AdapterErrorCode } from '@holdfast/kernel';
import { dataFrame, MAX_LOG_LINES_PER_CALL, readDataFrame, type AgentCallFrame, type CallMethod } from './call-frames.js';
import { CreditedReadable, CreditedSender } from './credit-stream.js';
import type { SealedBundle } from './sealed-bundle.js';

/** What the channel needs of the connection it runs on. */
export interface ChannelPeer {
  sendText(frame: object): void;
  sendBinary(frame: Buffer): void;
  /** Bytes queued on the socket and not yet written (a restore's input waits while this is high). */
  bufferedAmount(): number;
  /** Closes the connection with a protocol error: the agent sent something it was never asked for. */
  protocolError(reason: string): void;
}

/** One call the server makes on the agent. */
export interface CallRequest {
  method: CallMethod;
  adapterId: string;
  config: Record<string, unknown>;
  credentials: Record<string, Record<string, unknown>>;
  options: Record<string, unknown>;
  /** dump: the agent streams output bytes. */
  output?: boolean;
  /** restore: the bytes to stream to the agent. */
  input?: Readable;
  signal?: AbortSignal;
  /** Receives the adapter's log lines the agent forwards for this call (at most MAX_LOG_LINES_PER_CALL). */
  onLog?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** directDump: seals the call's secrets for its id (the id is bound into the sealed bundle). */
  seal?: (callId: number) => SealedBundle;
  /** directDump: plaintext bytes the agent read from the source so far. */
  onProgress?: (bytes: number) => void;
}

/** A started call: `opened` (dump only) settles when its output starts, `result` with the call's value. */
export interface CallHandle {
  opened: Promise<{ extension: string; stream: Readable }>;
  result: Promise<unknown>;
  /** directDump: tells the agent the object key to upload under (its uploads start then). */
  target(key: string): void;
}

interface Pending {
  method: CallMethod;
  adapterId: string;
  resolve(value: unknown): void;
  reject(error: Error): void;
  output?: CreditedReadable;
  opened?: { resolve(value: { extension: string; stream: Readable }): void; reject(error: Error): void; isDone: boolean };
  input?: CreditedSender;
  onLog?: CallRequest['onLog'];
  onProgress?: CallRequest['onProgress'];
  logLines: number;
  cleanup(): void;
}

/** Bytes queued on the socket above which a restore's input waits for the socket to drain. */
const SEND_BUFFER_LIMIT = 4 * 1024 * 1024;

/** An agent's error as the engine sees a local adapter's: an AdapterError with the same code and message. */
function remoteError(adapterId: string, message: string, code: AdapterErrorCode | undefined): Error {
  if (!code) return new Error(message);
  const error = new AdapterError(`source-${adapterId}`, code, '');
  error.message = message;
  return error;
}

/**
 * The calls in flight on one agent connection. Call ids are issued here, one after another; a frame naming an id
 * never issued, a stream frame for a call without that stream, or more bytes than granted closes the connection
 * with a protocol error. Frames for a call that already ended (cancelled, or cut by a timeout) are dropped.
 */
export class CallChannel {
  private lastId = 0;
  private readonly pending = new Map<number, Pending>();
  private interruption: ((method: CallMethod) => Error) | undefined;

  constructor(private readonly peer: ChannelPeer) {}

  get activeCalls(): number {
    return this.pending.size;
  }

  start(request: CallRequest): CallHandle {
    const id = ++this.lastId;
    // Sealed before anything is pending: a key that cannot be sealed to fails the call here, with nothing sent.
    const sealed = request.seal ? { sealed: request.seal(id) } : {};
    let openedSettle: Pending['opened'];
    const opened = new Promise<{ extension: string; stream: Readable }>((resolve, reject) => {
      openedSettle = { resolve, reject, isDone: !request.output };
    });
    opened.catch(() => undefined);
    const result = new Promise<unknown>((resolve, reject) => {
      const onAbort = () => this.cancel(id);
      const entry: Pending = {
        method: request.method,
        adapterId: request.adapterId,
        resolve,
        reject,
        opened: openedSettle,
        onLog: request.onLog,
        onProgress: request.onProgress,
        logLines: 0,
        cleanup: () => request.signal?.removeEventListener('abort', onAbort),
      };
      if (request.output) {
        const output = new CreditedReadable((bytes) => this.peer.sendText({ type: 'credit', id, bytes }));
        // A reader that gives up on the stream (destroys it) ends the call on the agent, as closing a local dump's
        // pipe ends the dump: otherwise the agent would wait for credit for ever.
        output.once('close', () => {
          if (this.pending.get(id) === entry && !output.readableEnded) this.cancel(id);
        });
        entry.output = output;
      }
      if (request.input) {
        entry.input = new CreditedSender(
          (bytes) => this.peer.sendBinary(dataFrame(id, bytes)),
          () => this.peer.bufferedAmount() > SEND_BUFFER_LIMIT,
        );
      }
      this.pending.set(id, entry);
      if (this.interruption) return this.fail(id, this.interruption(request.method));
      if (request.signal?.aborted) return this.fail(id, this.aborted(request.adapterId));
      request.signal?.addEventListener('abort', onAbort, { once: true });
      this.peer.sendText({ type: 'call', id, method: request.method, adapterId: request.adapterId, config: request.config, credentials: request.credentials, options: request.options, ...sealed });
      entry.output?.open();
      if (request.input && entry.input) this.pump(id, request.input, entry.input);
    });
    result.catch(() => undefined);
    const target = (key: string) => {
      if (this.pending.has(id)) this.peer.sendText({ type: 'target', id, key });
    };
    return { opened, result, target };
  }

  /** A text frame of the agent, already validated against the call frame schema. */
  onText(frame: AgentCallFrame): void {
    const entry = this.entryFor(frame.id, frame.type);
    if (!entry) return;
    switch (frame.type) {
      case 'opened':
        if (!entry.output || !entry.opened || entry.opened.isDone) return this.peer.protocolError(`protocol error: unexpected opened for call ${frame.id}`);
        entry.opened.isDone = true;
        entry.opened.resolve({ extension: frame.extension, stream: entry.output });
        return;
      case 'end':
        if (!entry.output || !entry.opened?.isDone) return this.peer.protocolError(`protocol error: unexpected end for call ${frame.id}`);
        entry.output.finish();
        return;
      case 'credit':
        if (!entry.input) return this.peer.protocolError(`protocol error: unexpected credit for call ${frame.id}`);
        entry.input.grant(frame.bytes);
        return;
      case 'result':
        if (entry.opened && !entry.opened.isDone) return this.peer.protocolError(`protocol error: result before opened for call ${frame.id}`);
        entry.output?.finish();
        this.settle(frame.id, entry);
        entry.resolve(frame.value);
        return;
      case 'error':
        return this.fail(frame.id, remoteError(entry.adapterId, frame.message, frame.code));
      case 'progress':
        if (entry.method !== 'directDump') return this.peer.protocolError(`protocol error: unexpected progress for call ${frame.id}`);
        entry.onProgress?.(frame.bytes);
        return;
      case 'log':
        // Beyond the limit a (hostile or broken) agent's lines are dropped, not stored: the run's log stays bounded.
        if (entry.logLines >= MAX_LOG_LINES_PER_CALL) return;
        entry.logLines += 1;
        entry.onLog?.(frame.level, frame.message);
        return;
    }
  }

  /** A binary frame of the agent: output bytes of a dump. */
  onBinary(frame: Buffer): void {
    const data = readDataFrame(frame);
    if (!data) return this.peer.protocolError('protocol error: data frame without a call id');
    const entry = this.entryFor(data.id, 'data');
    if (!entry) return;
    if (!entry.output || !entry.opened?.isDone) return this.peer.protocolError(`protocol error: unexpected data for call ${data.id}`);
    if (!entry.output.accept(data.bytes)) this.peer.protocolError(`protocol error: call ${data.id} sent more bytes than granted`);
  }

  /** The connection ended: every call in flight fails at once with `interrupted: ...`, and so does every later one. */
  closed(interruption: (method: CallMethod) => Error): void {
    this.interruption = interruption;
    for (const [id, entry] of [...this.pending]) this.fail(id, interruption(entry.method));
  }

  private cancel(id: number): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.peer.sendText({ type: 'cancel', id });
    this.fail(id, this.aborted(entry.adapterId));
  }

  private aborted(adapterId: string): Error {
    return new AdapterError(`source-${adapterId}`, 'ABORTED', 'cancelled');
  }

  /** The pending call a frame names; undefined (and the connection closed when it was never issued) otherwise. */
  private entryFor(id: number, what: string): Pending | undefined {
    const entry = this.pending.get(id);
    if (entry) return entry;
    if (id > this.lastId) this.peer.protocolError(`protocol error: ${what} frame for call ${id}, which the server never made`);
    return undefined;
  }

  private async pump(id: number, input: Readable, sender: CreditedSender): Promise<void> {
    try {
      await sender.send(input);
      if (this.pending.has(id)) this.peer.sendText({ type: 'end', id });
    } catch (error) {
      if (!this.pending.has(id)) return;
      // The restore's input failed on the server (a storage read, a decryption): the agent must stop too.
      this.peer.sendText({ type: 'cancel', id });
      this.fail(id, error instanceof Error ? error : new Error(String(error)));
    }
  }

  private settle(id: number, entry: Pending): void {
    this.pending.delete(id);
    entry.cleanup();
  }

  private fail(id: number, error: Error): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.settle(id, entry);
    entry.input?.fail(error);
    if (entry.opened && !entry.opened.isDone) {
      entry.opened.isDone = true;
      entry.opened.reject(error);
    }
    // A reader that already stopped listening (the engine cancelled) must not get an unheard 'error' event: Node
    // turns that into an uncaught exception.
    if (entry.output && !entry.output.destroyed) entry.output.destroy(entry.output.listenerCount('error') > 0 ? error : undefined);
    entry.reject(error);
  }
}
