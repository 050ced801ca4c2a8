import { describe, expect, it } from 'vitest';
import { isAdapterError, readinessFrom } from '../src/index.js';

describe('readinessFrom', () => {
  it("answers the check's problems and warnings only", async () => {
    const check = async () => ({ problems: ['log_bin is off'], warnings: ['binlog_format is MIXED'], extra: 'dropped' });
    await expect(readinessFrom('source-mysql', check, new AbortController().signal)).resolves.toEqual({ problems: ['log_bin is off'], warnings: ['binlog_format is MIXED'] });
  });

  it('rejects with ABORTED as soon as the signal aborts, without waiting for the check', async () => {
    const controller = new AbortController();
    const never = () => new Promise<{ problems: string[]; warnings: string[] }>(() => undefined);
    const asked = readinessFrom('source-postgres', never, controller.signal);
    controller.abort();
    const error = await asked.catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code === 'ABORTED').toBe(true);
  });

  it('does not start the check when the signal already aborted', async () => {
    let started = false;
    const controller = new AbortController();
    controller.abort();
    const error = await readinessFrom('source-mysql', async () => ((started = true), { problems: [], warnings: [] }), controller.signal).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code === 'ABORTED').toBe(true);
    expect(started).toBe(false);
  });

  it("passes the check's own failure on", async () => {
    await expect(readinessFrom('source-mysql', async () => Promise.reject(new Error('connect ECONNREFUSED')), new AbortController().signal)).rejects.toThrow('connect ECONNREFUSED');
  });
});
