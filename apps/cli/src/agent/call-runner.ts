import {
  CLOSE,
  CreditedReadable,
  CreditedSender,
  dataFrame,
  MAX_LOG_MESSAGE_CHARS,
  readDataFrame,
  serverCallFrame,
  type CallFrame,
  type SealKeyPair,
} from '@holdfast/agents/protocol';
import { instantiateAdapter, isAdapterError, type AdapterRegistry, type KernelLogger, type RestoreTarget, type SourceAdapter } from '@holdfast/kernel';
import { container } from 'tsyringe';
import type { WebSocket } from 'ws';
import type { AgentLog } from './agent-connection.js';
import { runArchiveDump, runArchiveRestore } from './archive-runner.js';
import { runDirectDump } from './direct-dump.js';
import { runScratchCall } from './scratch-calls.js';
import type { ScratchJournal } from './scratch-journal.js';

/** Bytes queued on the socket above which a dump's output waits for it to drain. */
const SEND_BUFFER_LIMIT = 4 * 1024 * 1024;

interface RunningCall {
  abort: AbortController;
  /** dump: the output sent as credit allows. */
  output?: CreditedSender;
  /** restore: the input, fed by the server's data frames. */
  input?: CreditedReadable;
  /** directDump: the object key the server sends once the dump opened. */
  target?: { key: Promise<string>; resolve(key: string): void };
  isCancelled: boolean;
}

/** Where an adapter's log line goes besides the agent's own log: the server, for the run's log. */
type ForwardLog = (level: 'info' | 'warn' | 'error', message: string, fields: Record<string, unknown>) => void;

/** The agent's log as the logger adapters write to (their lines carry the call); each line is also forwarded. */
function adapterLogger(log: AgentLog, bindings: Record<string, unknown>, forward: ForwardLog): KernelLogger {
  const write = (level: 'info' | 'warn' | 'error') => (obj: object | string, msg?: string) => {
    const fields = typeof obj === 'string' ? {} : (obj as Record<string, unknown>);
    const message = typeof obj === 'string' ? obj : (msg ?? '');
    log(level, message, { ...bindings, ...fields });
    forward(level, message, fields);
  };
  return { debug: () => undefined, info: write('info'), warn: write('warn'), error: write('error'), child: (more) => adapterLogger(log, { ...bindings, ...more }, forward) };
}

/** Forwarded log lines per call, and per second within a call; the rest are counted and reported once at the end. */
const LOG_LINES_PER_CALL = 200;
const LOG_LINES_PER_SECOND = 20;

/**
 * Sends a call's adapter log lines to the server as `log` frames (docs/agents.md "Protocol"), limited so a chatty
 * adapter cannot flood the connection or the run's log: at most {@link LOG_LINES_PER_CALL} per call and
 * {@link LOG_LINES_PER_SECOND} per second, each message (with its fields as compact JSON) cut to the frame's limit.
 * Fields are the adapter's own (database names, versions); the call's config and credentials are never among them.
 */
class CallLogForwarder {
  private sent = 0;
  private dropped = 0;
  private windowStart = 0;
  private inWindow = 0;

  constructor(
    private readonly id: number,
    private readonly send: (frame: object) => void,
  ) {}

  readonly forward: ForwardLog = (level, message, fields) => {
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.inWindow = 0;
    }
    if (this.sent >= LOG_LINES_PER_CALL || this.inWindow >= LOG_LINES_PER_SECOND) {
      this.dropped += 1;
      return;
    }
    this.sent += 1;
    this.inWindow += 1;
    const detail = Object.keys(fields).length > 0 ? ` ${safeJson(fields)}` : '';
    this.send({ type: 'log', id: this.id, level, message: `${message}${detail}`.slice(0, MAX_LOG_MESSAGE_CHARS) });
  };

  /** Before the call's result: says how many lines the limits held back. */
  finish(): void {
    if (this.dropped > 0) this.send({ type: 'log', id: this.id, level: 'warn', message: `${this.dropped} more adapter log line(s) not forwarded (limit ${LOG_LINES_PER_CALL} per call, ${LOG_LINES_PER_SECOND} per second); see the agent's log` });
    this.dropped = 0;
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return '';
  }
}

/**
 * Runs the server's calls on this agent (docs/agents.md "Protocol"): each call builds a fresh instance of the source
 * adapter from the config in the call frame (secrets included), runs the one method, and disposes it. The config
 * lives only in this call's memory: it is never written anywhere and is dropped when the call ends.
 */
export class AgentCallRunner {
  private readonly calls = new Map<number, RunningCall>();

  constructor(
    private readonly socket: WebSocket,
    private readonly registry: AdapterRegistry,
    private readonly log: AgentLog,
    private readonly forwardLogs = false,
    /** Direct uploads: this connection's X25519 key pair (memory only) and the agent's id, bound into sealed bundles. */
    private readonly direct?: { keys: SealKeyPair; agentId: string },
    /** Scratch folders made and not yet removed, swept at the agent's next start (scratch-journal.ts). */
    private readonly scratchJournal?: ScratchJournal,
  ) {}

  /** A frame after the welcome. Returns false when it is not a call frame (the connection handles it). */
  onFrame(data: Buffer, isBinary: boolean): boolean {
    if (isBinary) {
      const frame = readDataFrame(data);
      const call = frame && this.calls.get(frame.id);
      if (frame && call?.input && !call.input.accept(frame.bytes)) this.socket.close(CLOSE.protocolError, 'protocol error: more restore bytes than granted');
      return true;
    }
    let message: unknown;
    try {
      message = JSON.parse(data.toString('utf8'));
    } catch {
      return false;
    }
    const parsed = serverCallFrame.safeParse(message);
    if (!parsed.success) return false;
    const frame = parsed.data;
    const call = this.calls.get(frame.id);
    switch (frame.type) {
      case 'call':
        if (!call) void this.run(frame);
        return true;
      case 'credit':
        call?.output?.grant(frame.bytes);
        return true;
      case 'end':
        call?.input?.finish();
        return true;
      case 'cancel':
        if (call) this.cancel(call, 'cancelled by the server');
        return true;
      case 'target':
        call?.target?.resolve(frame.key);
        return true;
    }
  }

  /** The connection ended: every call stops (the server has already failed them). */
  closeAll(): void {
    for (const call of this.calls.values()) this.cancel(call, 'connection to the server lost');
  }

  private cancel(call: RunningCall, reason: string): void {
    call.isCancelled = true;
    call.abort.abort(new Error(reason));
    call.output?.fail(new Error(reason));
    call.input?.destroy(new Error(reason));
  }

  private send(frame: object): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private async run(frame: CallFrame): Promise<void> {
    const call: RunningCall = { abort: new AbortController(), isCancelled: false };
    const { id } = frame;
    if (frame.method === 'directDump') {
      let resolve: (key: string) => void = () => undefined;
      const key = new Promise<string>((settle) => (resolve = settle));
      call.target = { key, resolve };
    }
    if (frame.method === 'dump' || frame.method === 'directDump' || frame.method === 'archiveDump') {
      call.output = new CreditedSender(
        (bytes) => this.socket.send(dataFrame(id, bytes), { binary: true }),
        () => this.socket.bufferedAmount > SEND_BUFFER_LIMIT,
      );
    }
    if (frame.method === 'restore' || frame.method === 'archiveDump' || frame.method === 'archiveRestore') call.input = new CreditedReadable((bytes) => this.send({ type: 'credit', id, bytes }));
    this.calls.set(id, call);
    const started = Date.now();
    this.log('info', 'call started', { call: id, method: frame.method, adapter: frame.adapterId });
    let adapter: SourceAdapter | undefined;
    const logs = new CallLogForwarder(id, (logFrame) => {
      if (this.forwardLogs && !call.isCancelled) this.send(logFrame);
    });
    try {
      const found = this.registry.get('source', frame.adapterId);
      if (!found) throw new Error(`this agent has no source adapter "${frame.adapterId}"`);
      adapter = instantiateAdapter(container, found.definition, frame.config, {
        logger: adapterLogger(this.log, { call: id, adapter: `source-${frame.adapterId}` }, logs.forward),
        credentials: frame.credentials,
      }) as SourceAdapter;
      const value = await this.invoke(frame, adapter, call);
      logs.finish();
      if (!call.isCancelled) this.send({ type: 'result', id, value: value ?? null });
      this.log('info', 'call finished', { call: id, method: frame.method, ms: Date.now() - started });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      logs.finish();
      if (!call.isCancelled) this.send({ type: 'error', id, message: message.slice(0, 4000), ...(isAdapterError(error) ? { code: error.code } : {}) });
      this.log(call.isCancelled ? 'info' : 'warn', 'call failed', { call: id, method: frame.method, err: message });
    } finally {
      this.calls.delete(id);
      if (call.input && !call.input.destroyed) call.input.destroy();
      await adapter?.dispose?.().catch(() => undefined);
    }
  }

  private async invoke(frame: CallFrame, adapter: SourceAdapter, call: RunningCall): Promise<unknown> {
    const signal = call.abort.signal;
    const target = frame.options.target as RestoreTarget | undefined;
    switch (frame.method) {
      case 'check':
        return adapter.check();
      case 'detectVersion':
        return adapter.detectVersion();
      case 'listDatabases':
        return adapter.listDatabases();
      case 'databaseSizes':
        if (!adapter.databaseSizes) throw new Error('this source adapter does not report database sizes');
        return adapter.databaseSizes();
      case 'restoreWouldReplace':
        return adapter.restoreWouldReplace ? adapter.restoreWouldReplace(target ?? {}, signal) : [];
      case 'restore': {
        call.input!.open();
        const overwrite = typeof frame.options.overwrite === 'boolean' ? frame.options.overwrite : undefined;
        return adapter.restore(call.input!, { target: target ?? {}, signal, ...(overwrite === undefined ? {} : { overwrite }) });
      }
      case 'scratchFigures':
      case 'scratchIntegrityCheck':
      case 'scratchListDatabases':
      case 'scratchDatabaseExists':
      case 'scratchDropDatabase':
      case 'scratchReadOwner':
      case 'scratchWriteOwner':
      case 'scratchMakeFolder':
      case 'scratchRemoveFolder':
        return runScratchCall(frame, adapter, signal, this.scratchJournal);
      case 'archiveDump':
        return runArchiveDump(frame, adapter, { input: call.input!, output: call.output!, signal, send: (reply) => this.send(reply) });
      case 'archiveRestore':
        return runArchiveRestore(frame, adapter, { input: call.input!, signal, send: (reply) => this.send(reply) });
      case 'directDump': {
        if (!this.direct) throw new Error('this connection does not take direct uploads (the server did not offer them)');
        return runDirectDump(frame, adapter, {
          registry: this.registry,
          keys: this.direct.keys,
          agentId: this.direct.agentId,
          output: call.output!,
          signal,
          logger: adapterLogger(this.log, { call: frame.id, adapter: 'storage' }, () => undefined),
          send: (reply) => this.send(reply),
          target: call.target!.key,
        });
      }
      case 'dump': {
        const databases = Array.isArray(frame.options.databases) ? frame.options.databases.filter((item): item is string => typeof item === 'string') : [];
        const engineOptions = (frame.options.engineOptions ?? {}) as Record<string, unknown>;
        const handle = await adapter.dump({ databases, engineOptions, signal });
        handle.done.catch(() => undefined);
        // The stream's failure reaches the call through the sender and `done`. Without a listener of its own, an
        // abort's 'error' emitted after the sender let go of the stream (the connection to the server dropped
        // mid-dump) was an uncaught exception that stopped the agent (found by agent-server-killed.test.ts).
        handle.stream.on('error', () => undefined);
        this.send({ type: 'opened', id: frame.id, extension: handle.extension });
        try {
          await call.output!.send(handle.stream);
        } catch (error) {
          // The dump's own failure says more than the stream's.
          await handle.done;
          throw error;
        }
        this.send({ type: 'end', id: frame.id });
        return handle.done;
      }
    }
  }
}
