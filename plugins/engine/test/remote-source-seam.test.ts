// Issue 48: the engine builds a source bound to an agent through the kernel's REMOTE_SOURCE_RUNNER, never itself,
// and says clearly when no runner is registered (the agents plugin absent).
import { AdapterRegistry, REMOTE_SOURCE_RUNNER, silentLogger, type RemoteSourceRunner, type ResolvedAdapterConfig, type SourceAdapter } from '@holdfast/kernel';
import { container } from 'tsyringe';
import { describe, expect, it } from 'vitest';
import { AdapterFactory } from '../src/run/adapters.js';

const bound: ResolvedAdapterConfig = { configId: 'c1', name: 'warehouse', kind: 'source', adapterId: 'postgres', config: { password: 'p' }, credentials: {}, agentId: 'agent-1' };

describe('the engine seam for sources on agents', () => {
  it('asks the registered runner for a bound source, with its agent id, config and a logger', () => {
    const child = container.createChildContainer();
    const remote = { check: async () => ({ ok: true, message: 'remote' }) } as unknown as SourceAdapter;
    const asked: Array<Parameters<RemoteSourceRunner['source']>> = [];
    child.register(REMOTE_SOURCE_RUNNER, { useValue: { describeAgent: async () => null, source: (...args) => (asked.push(args), remote) } satisfies RemoteSourceRunner });
    // The registry has no postgres adapter: a bound source is never built here.
    const factory = new AdapterFactory(child, new AdapterRegistry(), silentLogger);
    expect(factory.source(bound)).toBe(remote);
    expect(asked[0]![0]).toMatchObject({ agentId: 'agent-1', config: { password: 'p' }, adapterId: 'postgres' });
    expect(asked[0]![1]?.logger).toBeDefined();
  });

  it('refuses a bound source clearly when no runner is registered', () => {
    const factory = new AdapterFactory(container.createChildContainer(), new AdapterRegistry(), silentLogger);
    expect(() => factory.source(bound)).toThrow('source "warehouse" runs on an agent, but remote agents are not available on this server');
  });
});
