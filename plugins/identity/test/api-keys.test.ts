import { afterEach, describe, expect, it } from 'vitest';
import type { EntityManager } from '@mikro-orm/core';
import { UnauthorizedError } from '@holdfast/kernel';
import { ApiKeyService } from '../src/api-keys/api-key-service.js';
import { sha256Hex } from '../src/crypto/scrypt-hash.js';
import { ApiKeyEntity } from '../src/entities/api-key.js';
import { SessionService } from '../src/sessions/session-service.js';
import { UserService } from '../src/users/user-service.js';
import { newId } from '../src/crypto/tokens.js';
import { DIALECTS, openDatabase, type TestDatabase } from './support/database.js';

let db: TestDatabase | undefined;
afterEach(async () => {
  await db?.close();
  db = undefined;
});

async function reasonOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as UnauthorizedError).message).toBe('Unauthorized');
    return (error as UnauthorizedError).reason;
  }
  throw new Error('expected the validation to fail');
}

describe.each(DIALECTS)('API key service on %s', (dialect) => {
  async function setup() {
    db = await openDatabase(dialect);
    const users = new UserService(db.database);
    const owner = await users.create({ name: 'Owner', email: 'owner@example.test', password: 'long enough password' });
    return { users, owner, keys: new ApiKeyService(db.database) };
  }

  it('issues svc_key_ + 40 hex, stores only a salted scrypt hash and never the raw key', async () => {
    const { keys, owner } = await setup();
    const issued = await keys.create(owner.id, { name: 'ci', permissions: ['jobs:read', 'jobs:execute'] });
    expect(issued.rawKey).toMatch(/^svc_key_[0-9a-f]{40}$/);
    expect(issued.rawKey).toHaveLength(48);
    expect(issued.apiKey.prefix).toBe(issued.rawKey.slice(0, 16));
    const row = await (db!.database.em() as EntityManager).findOneOrFail(ApiKeyEntity, { id: issued.apiKey.id });
    expect(row.hashedKey).toMatch(/^[0-9a-f]{32}:[0-9a-f]{128}$/);
    const everything = await db!.dumpAllRows();
    expect(everything).toContain(issued.apiKey.id);
    expect(everything).not.toContain(issued.rawKey);
    expect(everything).not.toContain(issued.rawKey.slice(16));
    expect(JSON.stringify(issued.apiKey)).not.toContain(row.hashedKey);
  });

  it('validates a key: identity with stored permissions, lastUsedAt set without waiting', async () => {
    const { keys, owner } = await setup();
    const issued = await keys.create(owner.id, { name: 'ci', permissions: ['history:read'] });
    expect(issued.apiKey.lastUsedAt).toBeNull();
    const identity = await keys.validate(issued.rawKey);
    expect(identity).toEqual({ id: issued.apiKey.id, name: 'ci', userId: owner.id, permissions: ['history:read'] });
    await keys.idle();
    expect((await keys.getById(issued.apiKey.id)).lastUsedAt).toBeInstanceOf(Date);
  });

  it('rejects tokens without the prefix, unknown keys, disabled keys and expired keys, each with its own reason', async () => {
    const { keys, owner } = await setup();
    const issued = await keys.create(owner.id, { name: 'ci', permissions: [] });
    expect(await reasonOf(keys.validate('not-a-key'))).toBe('not-a-key');
    const forged = `${issued.rawKey.slice(0, 16)}${'0'.repeat(32)}`;
    expect(await reasonOf(keys.validate(forged))).toBe('invalid');
    await keys.toggle(issued.apiKey.id, false);
    expect(await reasonOf(keys.validate(issued.rawKey))).toBe('disabled');
    await keys.toggle(issued.apiKey.id, true);
    await (db!.database.em() as EntityManager).nativeUpdate(ApiKeyEntity, { id: issued.apiKey.id }, { expiresAt: new Date(Date.now() - 1000) });
    expect(await reasonOf(keys.validate(issued.rawKey))).toBe('expired');
  });

  it('validates a legacy unsalted SHA-256 record once and rewrites it with scrypt', async () => {
    const { keys, owner } = await setup();
    const rawKey = `svc_key_${'ab'.repeat(20)}`;
    const em = db!.database.em() as EntityManager;
    em.create(ApiKeyEntity, {
      id: newId(),
      name: 'legacy',
      prefix: rawKey.slice(0, 16),
      hashedKey: sha256Hex(rawKey),
      permissions: '["jobs:read"]',
      userId: owner.id,
      enabled: true,
      createdAt: new Date(),
    });
    await em.flush();
    const identity = await keys.validate(rawKey);
    expect(identity.permissions).toEqual(['jobs:read']);
    const row = await (db!.database.em() as EntityManager).findOneOrFail(ApiKeyEntity, { name: 'legacy' });
    expect(row.hashedKey).toMatch(/^[0-9a-f]{32}:[0-9a-f]{128}$/);
    expect(row.hashedKey).not.toBe(sha256Hex(rawKey));
    expect((await keys.validate(rawKey)).id).toBe(identity.id);
    await keys.idle();
  });

  it('rotate issues a new raw key for the same record and the old one stops working', async () => {
    const { keys, owner } = await setup();
    const first = await keys.create(owner.id, { name: 'ci', permissions: ['jobs:read'] });
    const rotated = await keys.rotate(first.apiKey.id);
    expect(rotated.apiKey.id).toBe(first.apiKey.id);
    expect(rotated.rawKey).toMatch(/^svc_key_[0-9a-f]{40}$/);
    expect(rotated.rawKey).not.toBe(first.rawKey);
    expect(await reasonOf(keys.validate(first.rawKey))).toBe('invalid');
    expect((await keys.validate(rotated.rawKey)).id).toBe(first.apiKey.id);
    await keys.idle();
  });

  it('updatePermissions replaces the set and refuses names outside the catalog', async () => {
    const { keys, owner } = await setup();
    const issued = await keys.create(owner.id, { name: 'ci', permissions: ['jobs:read'] });
    expect((await keys.updatePermissions(issued.apiKey.id, ['history:read', 'dashboard:read'])).permissions).toEqual([
      'history:read',
      'dashboard:read',
    ]);
    await expect(keys.updatePermissions(issued.apiKey.id, ['jobs:read', 'root:everything'])).rejects.toThrow(/root:everything/);
    await expect(keys.create(owner.id, { name: 'x', permissions: ['nope'] })).rejects.toThrow(/Unknown permission\(s\): nope/);
    expect((await keys.getById(issued.apiKey.id)).permissions).toEqual(['history:read', 'dashboard:read']);
  });

  it('lists all keys or one user\'s, and delete removes a key', async () => {
    const { keys, owner, users } = await setup();
    const other = await users.create({ name: 'Other', email: 'other@example.test' });
    const a = await keys.create(owner.id, { name: 'a', permissions: [] });
    await keys.create(other.id, { name: 'b', permissions: [] });
    expect((await keys.list()).map((k) => k.name).sort()).toEqual(['a', 'b']);
    expect((await keys.list(owner.id)).map((k) => k.name)).toEqual(['a']);
    await keys.delete(a.apiKey.id);
    await expect(keys.getById(a.apiKey.id)).rejects.toThrow('API key not found');
  });

  it('deleting a user deletes their API keys and sessions', async () => {
    const { keys, owner, users } = await setup();
    await users.create({ name: 'Second admin', email: 'second@example.test', isSuperAdmin: true });
    const issued = await keys.create(owner.id, { name: 'a', permissions: [] });
    const sessions = new SessionService(db!.database);
    const { token } = await sessions.create(owner.id, '127.0.0.1', 'vitest');
    await users.delete(owner.id);
    expect(await keys.list(owner.id)).toEqual([]);
    expect(await sessions.resolve(token)).toBeNull();
    expect(await reasonOf(keys.validate(issued.rawKey))).toBe('invalid');
  });
});
