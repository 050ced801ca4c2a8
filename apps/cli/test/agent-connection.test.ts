import { describe, expect, it } from 'vitest';
import { backoffDelay, connectUrl } from '../src/agent/agent-connection.js';
import { proxyAgentFor } from '../src/agent/proxy.js';

describe('holdfast agent connection rules', () => {
  it('waits 1 s doubling to the cap, each wait in the upper half of its interval', () => {
    const low = () => 0;
    const high = () => 1;
    expect([0, 1, 2, 3, 4, 5, 6, 20].map((attempt) => backoffDelay(attempt, 30_000, high))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
    expect([0, 1, 5].map((attempt) => backoffDelay(attempt, 30_000, low))).toEqual([500, 1_000, 15_000]);
    expect(backoffDelay(10, 2_000, high)).toBe(2_000);
  });

  it('connects to the agents endpoint over ws or wss, under a base path', () => {
    expect(connectUrl('http://127.0.0.1:3000')).toBe('ws://127.0.0.1:3000/api/agents/connect');
    expect(connectUrl('https://backups.example.com/holdfast/')).toBe('wss://backups.example.com/holdfast/api/agents/connect');
    expect(() => connectUrl('ftp://example.com')).toThrow('http:// or https://');
  });

  it('takes the proxy from HTTPS_PROXY / HTTP_PROXY and honours NO_PROXY', () => {
    expect(proxyAgentFor('https://backups.example.com', { HTTPS_PROXY: 'http://proxy.internal:3128' })?.proxy).toBe('proxy.internal:3128');
    expect(proxyAgentFor('http://backups.example.com', { HTTPS_PROXY: 'http://proxy.internal:3128' })).toBeUndefined();
    expect(proxyAgentFor('http://backups.example.com', { http_proxy: 'http://proxy.internal:8080' })?.proxy).toBe('proxy.internal:8080');
    expect(proxyAgentFor('https://backups.example.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'localhost,.example.com' })).toBeUndefined();
    expect(proxyAgentFor('https://example.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'example.com' })).toBeUndefined();
    expect(proxyAgentFor('https://notexample.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'example.com' })?.proxy).toBe('p:1');
  });
});
