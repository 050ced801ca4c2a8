import { Readable } from 'node:stream';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError } from '@holdfast/sdk';
import { FakeMongoServer } from './fake-mongo.js';
import { drain, HOUSEKEEPING, mongoSource } from './helpers.js';
import { canonical, seedDocuments } from './seed.js';

const fake = await FakeMongoServer.start();
afterAll(() => fake.stop());
const signal = () => new AbortController().signal;
const work = () => fake.names((command) => !HOUSEKEEPING.has(command.name));

beforeEach(() => {
  fake.commands.length = 0;
  fake.data.clear();
  fake.users.clear();
  fake.roles.clear();
  const shop = fake.collection('shop', 'orders', true)!;
  shop.docs.push(...seedDocuments(1200));
  shop.indexes.push({ v: 2, key: { email: 1 }, name: 'email_1', unique: true });
  fake.users.set('shop', [{ _id: 'shop.app', userId: 'u1', user: 'app', db: 'shop', roles: [{ role: 'readWrite', db: 'shop' }], credentials: { 'SCRAM-SHA-256': { iterationCount: 15000, salt: 'c2FsdA==', storedKey: 'a2V5', serverKey: 'c2tleQ==' } }, mechanisms: ['SCRAM-SHA-256'] }]);
  fake.roles.set('shop', [{ _id: 'shop.auditor', role: 'auditor', db: 'shop', privileges: [{ resource: { db: 'shop', collection: '' }, actions: ['find'] }], roles: [] }]);
});

const config = (extra: Record<string, unknown> = {}) => ({ uri: fake.uri, method: 'driver', batchSize: 500, ...extra });

describe('source-mongodb against a fake MongoDB wire protocol server', () => {
  it('opens with the legacy OP_QUERY handshake and then sends the export commands over OP_MSG', async () => {
    const handle = await mongoSource(config({ includeUsers: true })).dump({ databases: ['shop'], signal: signal() });
    const bytes = await drain(handle.stream);
    expect(await handle.done).toMatchObject({ bytes: bytes.length, databases: ['shop'], engineVersion: '7.0.12' });
    expect(fake.commands[0]).toMatchObject({ protocol: 'OP_QUERY' });
    expect(['hello', 'isMaster', 'ismaster']).toContain(fake.commands[0]!.name);
    expect(work()).toEqual(['buildInfo', 'listDatabases', 'listCollections', 'listIndexes', 'find', 'getMore', 'getMore', 'usersInfo', 'rolesInfo']);
    const find = fake.commands.find((command) => command.name === 'find')!;
    expect(find).toMatchObject({ db: 'shop', protocol: 'OP_MSG', body: { find: 'orders', batchSize: 500 } });
    expect(fake.commands.find((command) => command.name === 'usersInfo')!.body).toMatchObject({ showCredentials: true });
    expect(bytes.subarray(0, 9)).toEqual(Buffer.from('HFMONGO\n\x01', 'latin1'));
    expect(fake.cursors.size).toBe(0);
  });

  it('restores with drop, ordered insert batches, indexes after the data, and merges users and roles', async () => {
    const source = mongoSource(config({ includeUsers: true }));
    const handle = await source.dump({ databases: ['shop'], signal: signal() });
    const dump = await drain(handle.stream);
    await handle.done;
    fake.commands.length = 0;
    const result = await source.restore(Readable.from([dump]), { target: { database: 'shop_copy' }, signal: signal() });
    expect(result.warnings).toEqual([]);
    expect(work()).toEqual(['drop', 'insert', 'insert', 'insert', 'createIndexes', 'insert', 'insert', '_mergeAuthzCollections', 'drop', 'drop']);
    const inserts = fake.commands.filter((command) => command.name === 'insert' && command.db === 'shop_copy');
    expect(inserts.map((command) => command.body.ordered)).toEqual([true, true, true]);
    expect(fake.commands.find((command) => command.name === 'createIndexes')!.body.indexes).toEqual([{ key: { email: 1 }, name: 'email_1', unique: true }]);
    expect(canonical(fake.collection('shop_copy', 'orders')!.docs)).toBe(canonical(fake.collection('shop', 'orders')!.docs));
    const [user] = fake.users.get('shop_copy')!;
    expect(user).toMatchObject({ _id: 'shop_copy.app', user: 'app', db: 'shop_copy', roles: [{ role: 'readWrite', db: 'shop_copy' }] });
    expect(canonical(user!.credentials)).toBe(canonical(fake.users.get('shop')![0]!.credentials));
    const [role] = fake.roles.get('shop_copy')!;
    expect(role).toMatchObject({ _id: 'shop_copy.auditor', role: 'auditor', db: 'shop_copy' });
    expect(canonical(role!.privileges)).toBe(canonical([{ resource: { db: 'shop_copy', collection: '' }, actions: ['find'] }]));
  });

  it('fails with AUTH on a refused login, never sending or showing the password', async () => {
    const password = 'hunter2-Sup3r-secret';
    const error = await mongoSource(config({ username: 'app', password })).dump({ databases: [], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('AUTH');
    expect((error as Error).message).toMatch(/^\[source-mongodb\] cannot connect to 127\.0\.0\.1:\d+: authentication failed/);
    expect((error as Error).message).not.toContain(password);
    expect(fake.names()).toContain('saslStart');
    expect(JSON.stringify(fake.commands)).not.toContain(password);
  });

  it('names the unreachable host when nothing listens there', async () => {
    const error = await mongoSource({ uri: 'mongodb://127.0.0.1:1/?directConnection=true', connectTimeoutSeconds: 1 })
      .dump({ databases: [], signal: signal() })
      .catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('TRANSIENT');
    expect((error as Error).message).toMatch(/^\[source-mongodb\] cannot connect to 127\.0\.0\.1:1: cannot reach the server \(.*ECONNREFUSED/);
  });

  it('fails before the first byte on an unknown database', async () => {
    const error = await mongoSource(config()).dump({ databases: ['nope'], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('NOT_FOUND');
    expect((error as Error).message).toContain('unknown database nope');
    expect(work()).toEqual(['buildInfo', 'listDatabases']);
  });

  it('closes its cursor on the fake when the dump is aborted', async () => {
    const controller = new AbortController();
    const handle = await mongoSource(config({ batchSize: 100 })).dump({ databases: ['shop'], signal: controller.signal });
    handle.stream.on('error', () => undefined);
    controller.abort();
    const error = await handle.done.catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('ABORTED');
    await expect.poll(() => fake.cursors.size).toBe(0);
    expect(work()).toContain('killCursors');
  });

  it('fails done (not the stream silently) when the server errors mid-export', async () => {
    fake.faults.set('getMore', { ok: 0, code: 43, codeName: 'CursorNotFound', errmsg: 'cursor id 1000 not found' });
    const handle = await mongoSource(config()).dump({ databases: ['shop'], signal: signal() });
    handle.stream.on('error', () => undefined);
    handle.stream.resume();
    const error = await handle.done.catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('TRANSIENT');
    expect((error as Error).message).toContain('export failed: cursor id 1000 not found');
  });

  it('refuses a truncated export stream', async () => {
    const handle = await mongoSource(config()).dump({ databases: ['shop'], signal: signal() });
    const dump = await drain(handle.stream);
    await handle.done;
    const error = await mongoSource(config()).restore(Readable.from([dump.subarray(0, dump.length - 30)]), { target: { database: 'cut' }, signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toContain('truncated');
  });

  it('lists user databases and reports the server version', async () => {
    const source = mongoSource(config());
    expect(await source.listDatabases()).toEqual(['admin', 'shop']);
    expect(await source.detectVersion()).toEqual({ version: '7.0.12', edition: 'MongoDB Community' });
  });
});
