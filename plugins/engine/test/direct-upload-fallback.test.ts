// Issue 48 scope 3: when a run with `direct` destinations cannot upload from the agent, it relays every destination
// and says why in the run's log (an older agent, a run the server must see the bytes of, a server without agents).
import type { RunPlan } from '@holdfast/kernel';
import { describe, expect, it } from 'vitest';
import type { StorageInstance } from '../src/run/adapters.js';
import { startDirectRun } from '../src/run/direct-upload.js';
import type { RunContext } from '../src/run/run-context.js';
import type { RunServices } from '../src/run/services.js';

function plan(agentId: string | null, transfers: Array<'relay' | 'direct'>): RunPlan {
  return {
    job: { id: 'job-1', name: 'job', databases: ['shop'], compression: 'GZIP', pgCompression: 'none', compressionLevel: null, compressionThreads: null },
    source: { configId: 'src', name: 'src', adapterId: 'postgres', config: {}, agentId },
    destinations: transfers.map((transfer, index) => ({ configId: `d${index}`, name: `dest ${index}`, adapterId: 's3', config: {}, priority: index, retention: null, transfer })),
    encryption: null,
  } as unknown as RunPlan;
}

function context(): { ctx: RunContext; warnings: string[] } {
  const warnings: string[] = [];
  const log = { info: () => undefined, warn: (message: string) => warnings.push(message), error: () => undefined };
  return { ctx: { log, signal: new AbortController().signal } as unknown as RunContext, warnings };
}

function services(directDump: (() => Promise<null>) | undefined, calls: { count: number }): RunServices {
  const runner = directDump ? { directDump: async () => ((calls.count += 1), directDump()) } : {};
  return { adapters: { remoteRunner: () => runner } } as unknown as RunServices;
}

const storages = [{ name: 'dest 0' }, { name: 'dest 1' }] as StorageInstance[];

describe('direct uploads fall back to relaying, saying why', () => {
  it('relays with a warning when the agent does not offer direct uploads (an older agent)', async () => {
    const { ctx, warnings } = context();
    const calls = { count: 0 };
    const run = await startDirectRun(ctx, services(async () => null, calls), { plan: plan('agent-1', ['direct', 'relay']), storages, retainUntil: [], codec: 'GZIP' }, () => undefined);
    expect(run).toBeUndefined();
    expect(calls.count).toBe(1);
    expect(warnings).toEqual(['the agent does not offer direct uploads (an older version): every destination is relayed through the server; upgrade the agent']);
  });

  it('relays with a warning, without asking the agent, when the run cannot upload directly', async () => {
    const { ctx, warnings } = context();
    const calls = { count: 0 };
    const run = await startDirectRun(ctx, services(async () => null, calls), { plan: plan('agent-1', ['direct']), storages, retainUntil: [], codec: 'GZIP', obstacle: 'a seekable archive' }, () => undefined);
    expect(run).toBeUndefined();
    expect(calls.count).toBe(0);
    expect(warnings[0]).toMatch(/direct uploads not possible for this run \(a seekable archive\)/);
    const noRunner = context();
    expect(await startDirectRun(noRunner.ctx, services(undefined, calls), { plan: plan('agent-1', ['direct']), storages, retainUntil: [], codec: 'GZIP' }, () => undefined)).toBeUndefined();
    expect(noRunner.warnings[0]).toMatch(/this server cannot make them/);
  });

  it('ignores direct for a source the server runs itself, and does nothing when every destination relays', async () => {
    const calls = { count: 0 };
    for (const [agentId, transfers] of [[null, ['direct']], ['agent-1', ['relay', 'relay']]] as const) {
      const { ctx, warnings } = context();
      expect(await startDirectRun(ctx, services(async () => null, calls), { plan: plan(agentId, [...transfers]), storages, retainUntil: [], codec: 'GZIP' }, () => undefined)).toBeUndefined();
      expect(warnings).toEqual([]);
    }
    expect(calls.count).toBe(0);
  });
});
