import { describe, expect, it } from 'vitest';
import { sendBounded, testBounded, type NotificationChannel } from '../src/index.js';

const never = () => new Promise<never>(() => undefined);

describe('notification bounds', () => {
  it('turns a hanging send into false after the timeout', async () => {
    const channel: NotificationChannel = { send: never, test: never };
    const started = Date.now();
    await expect(sendBounded(channel, 'hi', undefined, 50)).resolves.toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('turns a throwing channel into false / an unsuccessful test', async () => {
    const channel: NotificationChannel = {
      send: () => {
        throw new Error('boom');
      },
      test: () => Promise.reject(new Error('bad token')),
    };
    await expect(sendBounded(channel, 'hi')).resolves.toBe(false);
    await expect(testBounded(channel)).resolves.toEqual({ success: false, message: 'bad token' });
  });

  it('reports a test timeout with a clear message', async () => {
    const channel: NotificationChannel = { send: never, test: never };
    await expect(testBounded(channel, 30)).resolves.toEqual({ success: false, message: 'Timed out after 0.03 seconds' });
  });

  it('passes through a real answer', async () => {
    const channel: NotificationChannel = { send: async () => true, test: async () => ({ success: true, message: 'ok' }) };
    await expect(sendBounded(channel, 'hi')).resolves.toBe(true);
    await expect(testBounded(channel)).resolves.toEqual({ success: true, message: 'ok' });
  });
});
