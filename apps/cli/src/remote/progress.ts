import type { ExecutionView, RunProgress } from '@holdfast/client';
import { formatBytes, formatDuration } from './render.js';

/** Where progress goes: stderr, so stdout stays parseable (`--json`, the execution id). */
export interface ProgressSink {
  write(text: string): void;
  isTTY?: boolean;
  columns?: number;
}

const BAR_WIDTH = 24;

function bar(percent: number): string {
  const filled = Math.round((Math.max(0, Math.min(100, percent)) / 100) * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
}

/**
 * Shows a run's progress: on a terminal one line redrawn in place (bar, percent, stage, bytes, rate, elapsed),
 * elsewhere (CI logs) one plain line per change. The final line shows the backup's size, duration and average rate.
 */
export class ProgressReporter {
  private last = '';
  private drawn = false;

  constructor(private readonly sink: ProgressSink) {}

  update(progress: RunProgress): void {
    const key = `${progress.status} ${progress.stage} ${progress.progress} ${progress.bytes ?? ''}`;
    if (key === this.last) return;
    this.last = key;
    const flow = progress.bytes ? `  ${formatBytes(progress.bytes)}${progress.bytesPerSecond ? ` ${formatBytes(Math.round(progress.bytesPerSecond))}/s` : ''}` : '';
    const text = `${progress.status.padEnd(8)} ${String(progress.progress).padStart(3)}%  ${progress.stage}${flow}  ${formatDuration(progress.elapsedMs)}`;
    if (this.sink.isTTY) {
      const line = `${bar(progress.progress)} ${text}`.slice(0, Math.max(20, (this.sink.columns || 80) - 1));
      this.sink.write(`\r\x1b[2K${line}`);
      this.drawn = true;
    } else {
      this.sink.write(`${text}\n`);
    }
  }

  finish(view: ExecutionView): void {
    if (this.drawn) this.sink.write('\r\x1b[2K');
    const rate = view.size && view.duration ? `${formatBytes(Math.round((view.size / view.duration) * 1000))}/s` : '-';
    const parts = [`${view.status}`, `${view.type} ${view.id}`, `${formatBytes(view.size)}`, `in ${formatDuration(view.duration)}`, `(${rate})`];
    if (view.path) parts.push(view.path);
    this.sink.write(`${parts.join('  ')}\n`);
    if (view.error) this.sink.write(`error: ${view.error}\n`);
  }
}

export function stderrSink(): ProgressSink {
  return {
    write: (text) => void process.stderr.write(text),
    isTTY: process.stderr.isTTY === true,
    columns: process.stderr.columns,
  };
}
