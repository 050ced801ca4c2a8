import { afterEach, describe, expect, it } from 'vitest';
import { SettingsRateLimiter } from '../src/rate-limit/settings-rate-limiter.js';
import { IdentitySettings } from '../src/settings/identity-settings.js';
import { MemorySettings } from './support/memory-settings.js';
import { DIALECTS, openDatabase, type TestDatabase } from './support/database.js';
import { ADMIN, Client, startIdentityApp, type RunningIdentityApp } from './support/http.js';

let db: TestDatabase | undefined;
let app: RunningIdentityApp | undefined;
afterEach(async () => {
  await app?.close();
  await db?.close();
  app = undefined;
  db = undefined;
});

describe.each(DIALECTS)('rate limits on %s', (dialect) => {
  it('the 6th sign-in within a minute gets 429, and raising authPoints applies without a restart', async () => {
    db = await openDatabase(dialect);
    app = await startIdentityApp(db, { keepDefaultLimits: true });
    await app.services.users.create({ ...ADMIN, isSuperAdmin: true });
    const client = new Client(app.url);
    const attempt = () => client.call('POST', '/api/auth/sign-in', { json: { email: ADMIN.email, password: 'wrong password' } });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await attempt()).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    const limited = await attempt();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);

    // A change of the setting is read on the next request (the harness sets the settings cache to 0 ms).
    app.settings.set('authPoints', '10');
    expect((await attempt()).status).toBe(401);
    expect((await client.call('GET', '/api/auth/status')).headers.get('ratelimit-limit')).toBe('100');
  });

  it('GET requests use the api class and mutations the mutation class, from their own settings', async () => {
    db = await openDatabase(dialect);
    app = await startIdentityApp(db, { keepDefaultLimits: true });
    app.settings.set('apiPoints', '2');
    const client = new Client(app.url);
    expect((await client.call('GET', '/api/auth/status')).status).toBe(200);
    expect((await client.call('GET', '/api/auth/status')).status).toBe(200);
    expect((await client.call('GET', '/api/auth/status')).status).toBe(429);
    // Mutations count separately: sign-out is a mutation-class route.
    expect((await client.call('POST', '/api/auth/sign-out')).headers.get('ratelimit-limit')).toBe('20');
  });
});

describe('rate limits shared between processes', () => {
  it('on PostgreSQL two limiters (two server processes) count against the same counters', async () => {
    db = await openDatabase('postgresql');
    const stored = new MemorySettings();
    stored.set('authPoints', '3');
    const settings = new IdentitySettings(() => stored);
    const first = new SettingsRateLimiter(db.database, settings);
    const second = new SettingsRateLimiter(db.database, settings);
    const outcomes = [
      await first.consume('10.0.0.7', 'auth'),
      await second.consume('10.0.0.7', 'auth'),
      await first.consume('10.0.0.7', 'auth'),
      await second.consume('10.0.0.7', 'auth'),
    ];
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, true, false]);
    expect(outcomes.map((o) => o.remaining)).toEqual([2, 1, 0, 0]);
    expect((await first.consume('10.0.0.8', 'auth')).allowed).toBe(true);
  });

  it('on libsql each limiter counts in its own memory', async () => {
    db = await openDatabase('sqlite');
    const stored = new MemorySettings();
    stored.set('authPoints', '1');
    const settings = new IdentitySettings(() => stored);
    const first = new SettingsRateLimiter(db.database, settings);
    const second = new SettingsRateLimiter(db.database, settings);
    expect((await first.consume('10.0.0.7', 'auth')).allowed).toBe(true);
    expect((await first.consume('10.0.0.7', 'auth')).allowed).toBe(false);
    expect((await second.consume('10.0.0.7', 'auth')).allowed).toBe(true);
  });
});
