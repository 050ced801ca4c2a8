import { describe, expect, it } from 'vitest';
import { EventBus } from '../src/index.js';

describe('EventBus', () => {
  it('delivers typed payloads to every listener and supports unsubscribe', async () => {
    const bus = new EventBus();
    const seen: string[] = [];
    const off = bus.on('user_login', (p) => void seen.push(`a:${p.email}`));
    bus.on('user_login', async (p) => void seen.push(`b:${p.userName}`));
    await bus.emit('user_login', { userName: 'Ada', email: 'ada@example.test', timestamp: 'now' });
    off();
    await bus.emit('user_login', { userName: 'Bob', email: 'bob@example.test', timestamp: 'now' });
    expect(seen).toEqual(['a:ada@example.test', 'b:Ada', 'b:Bob']);
    expect(bus.listenerCount('user_login')).toBe(1);
  });

  it('logs a failing listener instead of throwing to the emitter', async () => {
    const errors: unknown[] = [];
    const logger = { debug() {}, info() {}, warn() {}, error: (o: unknown) => void errors.push(o) };
    const bus = new EventBus(logger);
    let reached = false;
    bus.on('backup_success', () => {
      throw new Error('listener broke');
    });
    bus.on('backup_success', () => {
      reached = true;
    });
    await expect(bus.emit('backup_success', { executionId: 'e1', jobId: 'j1' })).resolves.toBeUndefined();
    expect(reached).toBe(true);
    expect(errors).toHaveLength(1);
  });
});
