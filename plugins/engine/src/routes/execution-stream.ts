import { PassThrough, type Readable } from 'node:stream';
import { FINAL_STATUSES, type ExecutionStatus } from '../store/entities.js';
import type { ExecutionStore } from '../store/execution-store.js';
import { parseMetadata } from '../store/metadata.js';

/** How often the feed looks for news; reading the row works for runs owned by any process. */
export const STREAM_POLL_MS = 300;

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * A text/event-stream of one execution: `progress` when stage, progress or bytes processed change, `log` per new log line, and
 * `status` with the final state, after which the stream ends. Stops when the client leaves (`signal`).
 */
export function openExecutionStream(store: ExecutionStore, id: string, signal: AbortSignal): Readable {
  const stream = new PassThrough();
  let lastSeq = -1;
  let lastProgress = '';
  let isClosed = false;
  const close = () => {
    if (isClosed) return;
    isClosed = true;
    if (!stream.destroyed) stream.end();
  };
  signal.addEventListener('abort', close, { once: true });
  stream.once('close', () => (isClosed = true));
  const tick = async (): Promise<void> => {
    if (isClosed) return;
    const row = await store.get(id);
    if (!row) return close();
    for (const entry of await store.readLogs(id, lastSeq)) {
      lastSeq = entry.seq;
      const { seq: _seq, ...line } = entry;
      stream.write(frame('log', line));
    }
    const metadata = parseMetadata(row.metadata);
    const progress = JSON.stringify({ stage: metadata.stage ?? 'queued', progress: Math.round(metadata.progress ?? 0), status: row.status, bytesProcessed: metadata.bytesProcessed ?? null });
    if (progress !== lastProgress) {
      lastProgress = progress;
      stream.write(frame('progress', JSON.parse(progress)));
    }
    if (FINAL_STATUSES.includes(row.status as ExecutionStatus)) {
      stream.write(frame('status', { status: row.status, error: row.error ?? null, endedAt: row.endedAt?.toISOString() ?? null }));
      return close();
    }
    setTimeout(() => void tick().catch(() => close()), STREAM_POLL_MS).unref();
  };
  void tick().catch(() => close());
  return stream;
}
