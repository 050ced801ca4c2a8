import { describe, expect, it } from 'vitest';
import type { ExecutionView } from '@holdfast/client';
import { exitCodeOfStatus } from '../src/remote/exit-codes.js';
import { ProgressReporter } from '../src/remote/progress.js';

function sink(isTTY: boolean) {
  const chunks: string[] = [];
  return { chunks, sink: { write: (text: string) => void chunks.push(text), isTTY, columns: 100 } };
}

const progress = (stage: string, percent: number) => ({ executionId: 'e1', stage, progress: percent, status: 'Running' as const, elapsedMs: 12_000 });
const final = { id: 'e1', type: 'Backup', status: 'Success', size: 4 * 1024 * 1024, duration: 2000, path: 'files/a.tar.gz', error: null } as unknown as ExecutionView;

describe('ProgressReporter', () => {
  it('redraws one line in place on a terminal (bar, percent, stage, elapsed) and ends with bytes and rate', () => {
    const { chunks, sink: terminal } = sink(true);
    const reporter = new ProgressReporter(terminal);
    reporter.update(progress('dumping', 40));
    reporter.update(progress('dumping', 40)); // unchanged: not redrawn
    reporter.update(progress('uploading', 80));
    reporter.finish(final);
    expect(chunks).toHaveLength(4);
    expect(chunks[0]).toMatch(/^\r\x1b\[2K\[#{10}-{14}\] Running\s+40%  dumping  12s$/);
    expect(chunks[1]).toMatch(/^\r\x1b\[2K\[#{19}-{5}\] Running\s+80%  uploading/);
    expect(chunks[3]).toBe('Success  Backup e1  4.0 MiB  in 2s  (2.0 MiB/s)  files/a.tar.gz\n');
  });

  it('prints plain lines without control characters elsewhere (CI logs)', () => {
    const { chunks, sink: pipe } = sink(false);
    const reporter = new ProgressReporter(pipe);
    reporter.update(progress('dumping', 40));
    reporter.finish({ ...final, status: 'Failed', error: 'disk full' } as ExecutionView);
    expect(chunks.join('')).not.toMatch(/[\r\x1b]/);
    expect(chunks).toEqual(['Running   40%  dumping  12s\n', expect.stringMatching(/^Failed  Backup e1/), 'error: disk full\n']);
  });

  it('shows bytes and rate live once the server reports bytes', () => {
    const { chunks, sink: pipe } = sink(false);
    const reporter = new ProgressReporter(pipe);
    reporter.update({ ...progress('02-dump', 50), bytes: 3 * 1024 * 1024, bytesPerSecond: 1.5 * 1024 * 1024 });
    expect(chunks).toEqual(['Running   50%  02-dump  3.0 MiB 1.5 MiB/s  12s\n']);
  });

  it('maps final statuses to the documented exit codes', () => {
    expect(['Success', 'Partial', 'Failed', 'Cancelled'].map((status) => exitCodeOfStatus(status as ExecutionView['status']))).toEqual([0, 2, 3, 4]);
  });
});
