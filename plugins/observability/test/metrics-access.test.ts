import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { metricsAccessFromEnv, metricsVerdict } from '../src/metrics/metrics-access.js';

const TOKEN = 'scrape-token-0123456789';
const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

// Issue 41 item 7: /metrics was open to any address without credentials and named every job and adapter.
describe('who may read /metrics', () => {
  it('by default (no token, no allow-list) serves loopback callers only', () => {
    const access = metricsAccessFromEnv({});
    for (const ip of ['127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1']) expect(metricsVerdict(access, null, ip, undefined), ip).toBe('allowed');
    for (const ip of ['203.0.113.9', '10.0.0.5', '::ffff:192.168.1.4', '2001:db8::1', 'not-an-ip']) {
      expect(metricsVerdict(access, null, ip, undefined), ip).toBe('address-refused');
    }
  });

  it('with HOLDFAST_METRICS_TOKEN, any address presenting the token, and no one without it', () => {
    const access = metricsAccessFromEnv({ HOLDFAST_METRICS_TOKEN: TOKEN });
    expect(metricsVerdict(access, null, '203.0.113.9', `Bearer ${TOKEN}`)).toBe('allowed');
    expect(metricsVerdict(access, null, '203.0.113.9', undefined)).toBe('token-required');
    expect(metricsVerdict(access, null, '127.0.0.1', 'Bearer wrong-token-0123456789')).toBe('token-required');
    expect(metricsVerdict(access, null, '127.0.0.1', `Basic ${TOKEN}`)).toBe('token-required');
  });

  it('accepts the settings token as well as the env token', () => {
    const access = metricsAccessFromEnv({ HOLDFAST_METRICS_TOKEN: TOKEN });
    const other = 'settings-token-abcdefghij';
    expect(metricsVerdict(access, sha256Hex(other), '203.0.113.9', `Bearer ${other}`)).toBe('allowed');
    expect(metricsVerdict(access, sha256Hex(other), '203.0.113.9', `Bearer ${TOKEN}`)).toBe('allowed');
    expect(metricsVerdict(metricsAccessFromEnv({}), sha256Hex(other), '203.0.113.9', undefined)).toBe('token-required');
  });

  it('HOLDFAST_METRICS_ALLOW lists addresses and CIDR blocks, and applies together with a token', () => {
    const access = metricsAccessFromEnv({ HOLDFAST_METRICS_ALLOW: '10.0.0.0/8, 192.168.1.4, fd00::/8' });
    expect(metricsVerdict(access, null, '10.20.30.40', undefined)).toBe('allowed');
    expect(metricsVerdict(access, null, '::ffff:192.168.1.4', undefined)).toBe('allowed');
    expect(metricsVerdict(access, null, 'fd12::1', undefined)).toBe('allowed');
    // An explicit list replaces the loopback default.
    expect(metricsVerdict(access, null, '127.0.0.1', undefined)).toBe('address-refused');
    const both = metricsAccessFromEnv({ HOLDFAST_METRICS_ALLOW: '10.0.0.0/8', HOLDFAST_METRICS_TOKEN: TOKEN });
    expect(metricsVerdict(both, null, '10.1.1.1', undefined)).toBe('token-required');
    expect(metricsVerdict(both, null, '203.0.113.9', `Bearer ${TOKEN}`)).toBe('address-refused');
    expect(metricsVerdict(both, null, '10.1.1.1', `Bearer ${TOKEN}`)).toBe('allowed');
  });

  it('"*" opens it to every address (the behaviour before issue 41)', () => {
    expect(metricsVerdict(metricsAccessFromEnv({ HOLDFAST_METRICS_ALLOW: '*' }), null, '203.0.113.9', undefined)).toBe('allowed');
  });

  it('refuses bad values with a message naming the variable', () => {
    expect(() => metricsAccessFromEnv({ HOLDFAST_METRICS_TOKEN: 'short' })).toThrow(/HOLDFAST_METRICS_TOKEN must be at least 16/);
    for (const value of ['10.0.0.0/33', 'example.com', '10.0.0.1/8/2', '10.0.0.0/x', '*, 10.0.0.1']) {
      expect(() => metricsAccessFromEnv({ HOLDFAST_METRICS_ALLOW: value }), value).toThrow(/HOLDFAST_METRICS_ALLOW entry/);
    }
  });
});
