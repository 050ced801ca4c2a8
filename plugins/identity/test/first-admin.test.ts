import { afterEach, describe, expect, it } from 'vitest';
import { ConflictError, ValidationError } from '@holdfast/kernel';
import { createFirstAdmin } from '../src/users/first-admin.js';
import { DIALECTS, openDatabase, type TestDatabase } from './support/database.js';
import { Client, startIdentityApp, type RunningIdentityApp } from './support/http.js';

let db: TestDatabase | undefined;
let app: RunningIdentityApp | undefined;
afterEach(async () => {
  await app?.close();
  await db?.close();
  app = undefined;
  db = undefined;
});

describe.each(DIALECTS)('first administrator on %s', (dialect) => {
  it('HOLDFAST_ADMIN_EMAIL/PASSWORD create a super administrator at start who can sign in; a restart changes nothing', async () => {
    db = await openDatabase(dialect);
    const env = { HOLDFAST_ADMIN_EMAIL: 'Root@Example.test', HOLDFAST_ADMIN_PASSWORD: 'bootstrap password' };
    app = await startIdentityApp(db, { env });
    const users = await app.services.users.list();
    expect(users.map((u) => [u.email, u.name, u.isSuperAdmin])).toEqual([['root@example.test', 'Root', true]]);
    const client = new Client(app.url);
    await client.signIn('root@example.test', 'bootstrap password');
    expect((await client.call('GET', '/api/auth/status')).body.setupRequired).toBe(false);
    await app.close();
    app = await startIdentityApp(db, { env: { ...env, HOLDFAST_ADMIN_EMAIL: 'other@example.test' } });
    expect((await app.services.users.list()).map((u) => u.email)).toEqual(['root@example.test']);
  });

  it('createFirstAdmin (the CLI path) refuses once a user exists, also when two calls race', async () => {
    db = await openDatabase(dialect);
    const results = await Promise.allSettled([
      createFirstAdmin(db.database, { email: 'a@example.test', password: 'password one' }),
      createFirstAdmin(db.database, { email: 'b@example.test', password: 'password two' }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(ConflictError);
    await expect(createFirstAdmin(db.database, { email: 'c@example.test', password: 'password three' })).rejects.toThrow(/already complete/);
  });

  it('names the bad field of invalid input and creates nothing', async () => {
    db = await openDatabase(dialect);
    const error = await createFirstAdmin(db.database, { email: 'not-an-email', password: 'short' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/email: .*; password: must have at least 8 characters/);
    expect((error as Error).message).not.toContain('short');
  });
});
