import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type AdapterContext, type SourceAdapter } from '@holdfast/sdk';
import { allCommandLines, waitFor } from '@holdfast/testkit';
import { remoteToolProcesses, sshdState, type SshdState } from '@holdfast/tooling/harness/sshd';
import definition from '../src/index.js';
import { checksums, childCommands, createDatabase, dropDatabase, seed, server, sql } from './helpers.js';
import { databaseExists, dropRolesRecreatedBy, ownerOf, roleAuth, roleNames, withServerVersion } from './globals-helpers.js';

// SSH mode against the real OpenSSH sshd on 127.0.0.1:2222: its user `sshtest` runs pg_dump/pg_restore/psql, which
// reach the local PostgreSQL over loopback, so "remote" is this machine seen through sshd.
let sshd: SshdState;
const created: string[] = [];
const roles: string[] = [];

function sshSource(ssh: Record<string, unknown> = {}, overrides: Record<string, unknown> = {}, context: Partial<AdapterContext> = {}): SourceAdapter {
  const config = {
    ...server,
    ssh: { host: sshd.host, port: sshd.port, username: sshd.user, hostKeySha256: sshd.hostKeySha256, ...ssh },
    sshPrivateKey: readFileSync(sshd.keyPath, 'utf8'),
    ...overrides,
  };
  return instantiateAdapter(container, definition, config, context);
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(stream, new Writable({ write: (chunk, _e, cb) => (chunks.push(chunk), cb()) }));
  return Buffer.concat(chunks);
}

async function bigDatabase(label: string): Promise<string> {
  const name = await createDatabase(label);
  created.push(name);
  await sql(name, `CREATE TABLE blob AS SELECT g AS id, repeat(md5(g::text), 40) AS body FROM generate_series(1, 200000) g`);
  return name;
}

beforeAll(() => {
  sshd = sshdState();
});

afterAll(async () => {
  await Promise.all(created.map(dropDatabase));
  for (const role of roles) await sql('postgres', `DROP ROLE IF EXISTS "${role}"`);
});

describe('source-postgres in SSH mode (real sshd on 127.0.0.1:2222)', () => {
  it('checks, dumps and restores a database whose name has a space, quote, - and . over SSH, row for row', async () => {
    // The password login here; the key login is used by the other tests.
    const adapter = sshSource({}, { sshPrivateKey: undefined, sshPassword: sshd.password });
    const health = await adapter.check();
    expect(health).toMatchObject({ ok: true });
    expect(health.message).toMatch(/over SSH via 127\.0\.0\.1:2222/);

    const source = await createDatabase("it's ssh-a.b");
    created.push(source);
    const expected = await seed(source, 3000);
    expect(await adapter.listDatabases()).toContain(source);
    const dump = await adapter.dump({ databases: [source], signal: new AbortController().signal });
    const bytes = await collect(dump.stream);
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('PGDMP');
    expect((await dump.done).bytes).toBe(bytes.length);

    const target = `${source} restored`;
    created.push(target);
    await adapter.restore(Readable.from([bytes]), { target: { database: target }, signal: new AbortController().signal });
    expect(await checksums(target)).toEqual(expected);
  });

  it('takes the SSH login from the "ssh" credential profile when the config has none', async () => {
    const adapter = sshSource({ username: undefined }, { sshPrivateKey: undefined }, { credentials: { ssh: { type: 'USERNAME_PASSWORD', username: sshd.user, password: sshd.password } } });
    expect(await adapter.check()).toMatchObject({ ok: true });
  });

  it('hands the database password to the remote pg_dump without any command line showing it', async () => {
    const role = `hf_ssh_role_${randomBytes(3).toString('hex')}`;
    const password = `Db-Secret-${randomBytes(8).toString('hex')}`;
    roles.push(role);
    await sql('postgres', `CREATE ROLE "${role}" LOGIN PASSWORD '${password}' IN ROLE pg_read_all_data`);
    const big = await bigDatabase('pw');
    const controller = new AbortController();
    const dump = await sshSource({}, { user: role, password }).dump({ databases: [big], signal: controller.signal, engineOptions: { pgCompression: '0' } });
    // Unread, the remote pg_dump blocks on the SSH window: it is certainly running while the process list is read.
    expect(await waitFor(() => remoteToolProcesses(sshd.user, 'pg_dump').length > 0)).toBe(true);
    const lines = allCommandLines();
    expect(lines.some((line) => line.includes('pg_dump') && line.includes(role))).toBe(true);
    expect(lines.filter((line) => line.includes(password))).toEqual([]);
    const head = (await dump.stream[Symbol.asyncIterator]().next()).value as Buffer;
    expect(head.subarray(0, 5).toString('latin1')).toBe('PGDMP');
    controller.abort();
    await dump.done.catch(() => undefined);
  });

  it('a wrong SSH password fails the check naming SSH authentication, without the secret', async () => {
    const adapter = sshSource({}, { sshPrivateKey: undefined, sshPassword: 'Wrong-Ssh-Pass-77' });
    const health = await adapter.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/SSH authentication failed: login to 127\.0\.0\.1:2222 as sshtest failed/);
    expect(health.message).not.toContain('Wrong-Ssh-Pass-77');
    const error = await adapter.dump({ databases: ['postgres'], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(error) && (error as { code: string }).code).toBe('AUTH');
  });

  it('a wrong host key pin is refused naming the mismatch', async () => {
    const adapter = sshSource({ hostKeySha256: `SHA256:${'A'.repeat(43)}` });
    const health = await adapter.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/SSH host key mismatch: host key of 127\.0\.0\.1:2222 is SHA256:\S+, not the pinned SHA256:A{43}/);
    const error = await adapter.dump({ databases: ['postgres'], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(error) && (error as { code: string }).code).toBe('AUTH');
  });

  it('a tool missing on the SSH host fails with CONFIG naming it; an unreachable SSH host with TRANSIENT', async () => {
    const missing = sshSource({}, { binDirectory: '/nonexistent/holdfast-bin' });
    const health = await missing.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/\/nonexistent\/holdfast-bin\/psql was not found on 127\.0\.0\.1/);
    const error = await missing.dump({ databases: ['postgres'], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(error) && (error as { code: string }).code).toBe('CONFIG');
    const unreachable = await sshSource({ port: 1 }, { connectTimeoutSeconds: 2 }).dump({ databases: ['postgres'], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(unreachable) && (unreachable as { code: string }).code).toBe('TRANSIENT');
    expect((unreachable as Error).message).toMatch(/SSH connection failed: cannot connect to 127\.0\.0\.1:1/);
  });

  it('an unknown database over SSH rejects the dump with NOT_FOUND before any pg_dump starts on the remote host', async () => {
    const error = await sshSource().dump({ databases: ['postgres', 'hf_no_such_db'], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(error) && (error as { code: string }).code).toBe('NOT_FOUND');
    expect((error as Error).message).toBe('[source-postgres] unknown database "hf_no_such_db" on 127.0.0.1:5432');
    expect(remoteToolProcesses(sshd.user, 'pg_dump')).toEqual([]);
  });

  it('a pinned key is required in SSH mode', () => {
    expect(() => instantiateAdapter(container, definition, { ...server, ssh: { host: sshd.host, username: sshd.user } })).toThrow(/hostKeySha256/);
  });

  it('aborting mid-dump leaves no pg_dump on the remote host and no local child', async () => {
    const big = await bigDatabase('abort');
    const controller = new AbortController();
    const dump = await sshSource().dump({ databases: [big], signal: controller.signal, engineOptions: { pgCompression: '0' } });
    const drained = pipeline(dump.stream, new PassThrough({ highWaterMark: 1024 }), new Writable({ highWaterMark: 1024, write: (_c, _e, cb) => setTimeout(cb, 5) }));
    expect(await waitFor(() => remoteToolProcesses(sshd.user, 'pg_dump').length > 0)).toBe(true);
    controller.abort();
    await expect(drained).rejects.toBeTruthy();
    await expect(dump.done).rejects.toSatisfy((e: unknown) => isAdapterError(e) && (e as { code: string }).code === 'ABORTED');
    expect(await waitFor(() => remoteToolProcesses(sshd.user, 'pg_dump').length === 0)).toBe(true);
    expect((await childCommands()).filter((c) => c.includes('pg_dump'))).toEqual([]);
  });
});

describe('source-postgres globals and the version guard in SSH mode (real sshd on 127.0.0.1:2222)', () => {
  it('backs up a role with pg_dumpall over SSH and replays it with the remote psql, owner and rows intact', async () => {
    const owner = `hf_pgglob_ssh_${randomBytes(3).toString('hex')}`;
    roles.push(owner);
    await sql('postgres', `CREATE ROLE "${owner}" LOGIN PASSWORD 'Ssh-Glob-${randomBytes(4).toString('hex')}'`);
    const origin = await createDatabase('globssh');
    created.push(origin);
    const expected = await seed(origin, 800);
    await sql(origin, `ALTER TABLE items OWNER TO "${owner}"`);
    const ownerAuth = await roleAuth(owner);

    const dump = await sshSource({}, { includeGlobals: true }).dump({ databases: [origin], signal: new AbortController().signal });
    const bytes = await collect(dump.stream);
    await dump.done;
    expect(bytes.subarray(0, 12).toString('latin1')).toBe('HFPGMULTI\n\x02G');
    expect(bytes.includes(Buffer.from(`CREATE ROLE ${owner};`))).toBe(true);

    await dropDatabase(origin);
    await sql('postgres', `DROP ROLE "${owner}"`);
    const rolesBefore = await roleNames();
    const target = `${origin} via ssh`;
    created.push(target);
    try {
      const result = await sshSource({}, { restoreNoOwner: false }).restore(Readable.from([bytes]), {
        target: { databaseMapping: { [origin]: target } },
        signal: new AbortController().signal,
      });
      expect(result.warnings.filter((w) => /already exists/.test(w))).toEqual([]);
      expect(await roleAuth(owner)).toEqual(ownerAuth);
      expect(await ownerOf(target, 'items')).toBe(owner);
      expect(await checksums(target)).toEqual(expected);
    } finally {
      await dropDatabase(target);
      await dropRolesRecreatedBy(bytes, rolesBefore, [owner]);
    }
  });

  it('refuses a dump recorded from a newer major over SSH before the remote database is created', async () => {
    const origin = await createDatabase('newerssh');
    created.push(origin);
    await seed(origin, 20);
    const dump = await sshSource().dump({ databases: [origin], signal: new AbortController().signal });
    const bytes = withServerVersion(await collect(dump.stream), '99');
    const target = `${origin}_newer`;
    created.push(target);
    await expect(
      sshSource().restore(Readable.from([bytes]), { target: { database: target }, signal: new AbortController().signal }),
    ).rejects.toThrow(/newer than the target server's PostgreSQL 15.*Nothing was written/);
    expect(await databaseExists(target)).toBe(false);
  });
});
