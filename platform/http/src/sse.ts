import { PassThrough, type Readable } from 'node:stream';

/** One server-sent event; `data` that is not a string is sent as JSON. */
export interface ServerSentEvent {
  event?: string;
  id?: string;
  data: unknown;
  /** Reconnection delay the client should use, in milliseconds. */
  retry?: number;
}

/** Options of {@link createSseStream}. */
export interface SseStreamOptions {
  /** Interval of `: keep-alive` comments that stop proxies from closing an idle stream (default 15 s). */
  keepAliveMs?: number;
  /** Ends the stream when aborted; pass the route request's `signal` so a client that leaves stops the work. */
  signal?: AbortSignal;
}

/** A text/event-stream body plus the functions that write to it. */
export interface SseStream {
  /** Hand this to `routeResult({ stream, headers: SSE_HEADERS })`. */
  stream: Readable;
  /** Writes one event; returns false when the client is slow and the caller should wait for `drain`. */
  send(event: ServerSentEvent): boolean;
  /** Writes a comment line, ignored by clients. */
  comment(text: string): boolean;
  /** Ends the stream (idempotent). */
  close(): void;
  readonly isClosed: boolean;
}

/** Headers a server-sent-events route passes in its `routeResult()`; the app adds the anti-buffering ones. */
export const SSE_HEADERS: Readonly<Record<string, string>> = { 'Content-Type': 'text/event-stream; charset=utf-8' };

/** Field values may not contain line breaks; each line of data becomes its own `data:` line, per the SSE format. */
function singleLine(value: string): string {
  return value.replace(/[\r\n]+/g, ' ');
}

/** Formats one event in the text/event-stream wire format. */
export function formatServerSentEvent(event: ServerSentEvent): string {
  let frame = '';
  if (event.id !== undefined) frame += `id: ${singleLine(event.id)}\n`;
  if (event.event !== undefined) frame += `event: ${singleLine(event.event)}\n`;
  if (event.retry !== undefined) frame += `retry: ${Math.max(0, Math.floor(event.retry))}\n`;
  const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
  for (const line of data.split(/\r\n|\r|\n/)) frame += `data: ${line}\n`;
  return `${frame}\n`;
}

/** Creates a server-sent-events stream with keep-alive comments that stops when closed, destroyed or aborted. */
export function createSseStream(options: SseStreamOptions = {}): SseStream {
  const stream = new PassThrough();
  let isClosed = false;
  const keepAlive = setInterval(() => {
    if (!isClosed) stream.write(': keep-alive\n\n');
  }, options.keepAliveMs ?? 15_000);
  keepAlive.unref();

  const close = (): void => {
    if (isClosed) return;
    isClosed = true;
    clearInterval(keepAlive);
    options.signal?.removeEventListener('abort', close);
    if (!stream.destroyed) stream.end();
  };
  // The response pipeline destroys the stream when the client disconnects.
  stream.once('close', close);
  if (options.signal?.aborted) close();
  else options.signal?.addEventListener('abort', close, { once: true });

  return {
    stream,
    send: (event) => (isClosed ? false : stream.write(formatServerSentEvent(event))),
    comment: (text) => (isClosed ? false : stream.write(`: ${singleLine(text)}\n\n`)),
    close,
    get isClosed() {
      return isClosed;
    },
  };
}
