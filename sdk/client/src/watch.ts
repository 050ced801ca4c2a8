import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { HoldfastClient } from './client.js';
import { apiError } from './errors.js';
import type { ExecutionEvent } from './types.js';

export interface WatchOptions {
  /** Stops the stream (the iterator then ends quietly). */
  signal?: AbortSignal;
}

const EVENT_TYPES = new Set(['progress', 'log', 'status']);

function toEvent(message: EventSourceMessage): ExecutionEvent | undefined {
  if (!message.event || !EVENT_TYPES.has(message.event)) return undefined;
  return { type: message.event, ...(JSON.parse(message.data) as object) } as ExecutionEvent;
}

/**
 * The server-sent events of one execution (`GET /api/executions/{id}/events`) as an async iterable: `progress`,
 * `log`, and finally `status`, after which the iteration ends. Uses fetch + a stream reader (no EventSource), so an
 * API key can be sent as a header and it runs unchanged in Node 20 and browsers.
 */
export async function* watchExecution(client: HoldfastClient, executionId: string, options: WatchOptions = {}): AsyncGenerator<ExecutionEvent> {
  const url = `${client.baseUrl}/api/executions/${encodeURIComponent(executionId)}/events`;
  const request = new Request(url, {
    headers: { accept: 'text/event-stream', ...client.authHeaders('GET') },
    credentials: 'include',
    signal: options.signal,
  });
  const response = await client.fetch(request);
  if (!response.ok) throw await apiError('GET', url, response);
  if (!response.body) return;
  const pending: ExecutionEvent[] = [];
  const parser = createParser({
    onEvent(message) {
      const event = toEvent(message);
      if (event) pending.push(event);
    },
  });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (options.signal?.aborted) return;
        throw error;
      }
      if (chunk.done) break;
      parser.feed(decoder.decode(chunk.value, { stream: true }));
      while (pending.length) {
        const event = pending.shift()!;
        yield event;
        if (event.type === 'status') return;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
