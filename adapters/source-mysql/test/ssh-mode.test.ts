import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type AdapterContext, type SourceAdapter } from '@holdfast/sdk';
import { allCommandLines, listChildProcesses, waitFor, waitForNoNewChildren } from '@holdfast/testkit';
import { remoteToolProcesses, sshdState, type SshdState } from '@holdfast/tooling/harness/sshd';
import definition from '../src/index.js';
import { createDatabase, definitions, dropDatabases, seed, server, sql, tableRows } from './helpers.js';

// SSH mode against the real OpenSSH sshd on 127.0.0.1:2222: its user `sshtest` runs mariadb-dump and mariadb, which
// reach the local MariaDB over loopback, so "remote" is this machine seen through sshd.
let sshd: SshdState;
let big: string;
let user: string;
const created: string[] = [];
// Quotes, a backslash, a hash and a dollar prove the remote secret file keeps the value intact (MariaDB checks it).
const PASSWORD = `Ssh"-\\x'#$;${randomBytes(6).toString('hex')}`;

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
  await pipeline(stream, new Writable({ write: (chunk: Buffer, _e, cb) => (chunks.push(chunk), cb()) }));
  return Buffer.concat(chunks);
}

const signal = () => new AbortController().signal;

beforeAll(async () => {
  sshd = sshdState();
  big = await createDatabase('sshbig');
  created.push(big);
  // About 25 MB: far more than the SSH window, so an unread dump stays running on the remote side.
  await sql('CREATE TABLE blob_rows (id INT PRIMARY KEY, body TEXT) AS SELECT seq AS id, REPEAT(MD5(seq), 40) AS body FROM seq_1_to_20000', [], big);
  user = `hf_myssh_${randomBytes(4).toString('hex')}`;
  await sql(`CREATE USER ?@'%' IDENTIFIED BY ?`, [user, PASSWORD]);
  await sql(`GRANT SELECT, SHOW VIEW, TRIGGER, EVENT, LOCK TABLES ON \`${big}\`.* TO ?@'%'`, [user]);
});

afterAll(async () => {
  await dropDatabases(...created);
  if (user) await sql(`DROP USER IF EXISTS ?@'%'`, [user]);
});

describe('source-mysql in SSH mode (real sshd on 127.0.0.1:2222)', () => {
  // Shell metacharacters prove the remote argv is quoted word by word. No quote in the name: mariadb-dump 10.11 itself
  // fails on a database name with ' or " when dumping events (error 1049, in local mode too).
  it('checks, dumps and restores a database whose name has a space, $, ;, &, - and . over SSH, row for row', async () => {
    const adapter = sshSource({}, { sshPrivateKey: undefined, sshPassword: sshd.password });
    const health = await adapter.check();
    expect(health).toMatchObject({ ok: true });
    expect(health.message).toMatch(/^Connected to MariaDB \d+\.\d+\.\d+ over SSH via 127\.0\.0\.1:2222$/);

    const source = await createDatabase('ssh a-b.c $HOME;&');
    created.push(source);
    await seed(source, 600);
    expect(await adapter.listDatabases()).toContain(source);
    const dump = await adapter.dump({ databases: [source], signal: signal() });
    const bytes = await collect(dump.stream);
    expect((await dump.done).bytes).toBe(bytes.length);

    const target = `${source} restored`;
    created.push(target);
    await adapter.restore(Readable.from([bytes]), { target: { database: target }, signal: signal() });
    expect(await tableRows(target)).toEqual(await tableRows(source));
    expect(await definitions(target)).toEqual(await definitions(source));
  });

  it('takes the SSH login from the "ssh" credential profile when the config has none', async () => {
    const adapter = sshSource({ username: undefined }, { sshPrivateKey: undefined }, { credentials: { ssh: { type: 'USERNAME_PASSWORD', username: sshd.user, password: sshd.password } } });
    expect(await adapter.check()).toMatchObject({ ok: true });
  });

  it('hands the database password to the remote tool (MariaDB checks it) without any command line showing it', async () => {
    const controller = new AbortController();
    const dump = await sshSource({}, { user, password: PASSWORD }).dump({ databases: [big], signal: controller.signal });
    // Unread, the remote dump blocks on the SSH window: it is certainly running now.
    expect(await waitFor(() => remoteToolProcesses(sshd.user, 'mariadb-dump').length > 0)).toBe(true);
    const lines = allCommandLines();
    expect(lines.some((line) => line.startsWith('mariadb-dump') && line.includes(user))).toBe(true);
    expect(lines.filter((line) => line.includes(PASSWORD))).toEqual([]);
    const head = (await dump.stream[Symbol.asyncIterator]().next()).value as Buffer;
    expect(head.toString('utf8')).toContain('holdfast-mysql');
    controller.abort();
    await dump.done.catch(() => undefined);
    const wrong = await sshSource({}, { user, password: `${PASSWORD}-wrong` }).check();
    expect(wrong.ok).toBe(false);
    expect(wrong.message).toMatch(/Access denied/);
    expect(wrong.message).not.toContain(PASSWORD);
  });

  it('a wrong SSH password fails the check naming SSH authentication, without the secret', async () => {
    const adapter = sshSource({}, { sshPrivateKey: undefined, sshPassword: 'Wrong-Ssh-Pass-77' });
    const health = await adapter.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/SSH authentication failed: login to 127\.0\.0\.1:2222 as sshtest failed/);
    expect(health.message).not.toContain('Wrong-Ssh-Pass-77');
  });

  it('a wrong host key pin is refused naming the mismatch, before the dump starts', async () => {
    const adapter = sshSource({ hostKeySha256: `SHA256:${'B'.repeat(43)}` });
    const health = await adapter.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/SSH host key mismatch: host key of 127\.0\.0\.1:2222 is SHA256:\S+, not the pinned SHA256:B{43}/);
    const error = await adapter.dump({ databases: [big], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('AUTH');
  });

  it('tools missing on the SSH host reject the dump with CONFIG naming the host', async () => {
    const error = await sshSource({}, { binDirectory: '/nonexistent/holdfast-bin' }).dump({ databases: [big], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toMatch(/neither mariadb-dump nor mysqldump was found in \/nonexistent\/holdfast-bin of 127\.0\.0\.1/);
  });

  it('aborting mid-dump leaves no mariadb-dump on the remote host and no local child', async () => {
    const before = await listChildProcesses();
    const controller = new AbortController();
    const dump = await sshSource().dump({ databases: [big], signal: controller.signal });
    const drained = pipeline(dump.stream, new PassThrough({ highWaterMark: 1024 }), new Writable({ highWaterMark: 1024, write: (_c, _e, cb) => setTimeout(cb, 5) }));
    expect(await waitFor(() => remoteToolProcesses(sshd.user, 'mariadb-dump').length > 0)).toBe(true);
    controller.abort();
    await expect(drained).rejects.toBeTruthy();
    await expect(dump.done).rejects.toSatisfy((e: unknown) => isAdapterError(e) && e.code === 'ABORTED');
    expect(await waitFor(() => remoteToolProcesses(sshd.user, 'mariadb-dump').length === 0)).toBe(true);
    expect(await waitForNoNewChildren(before)).toEqual([]);
  });
});
