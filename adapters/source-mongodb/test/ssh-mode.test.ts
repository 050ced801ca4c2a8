import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SocksClient } from 'socks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type AdapterContext, type SourceAdapter } from '@holdfast/sdk';
import { allCommandLines, createAdapterInstance, listChildProcesses, ownConnectionsTo, waitFor, waitForNoNewChildren } from '@holdfast/testkit';
import { sshdState, type SshdState } from '@holdfast/tooling/harness/sshd';
import definition from '../src/index.js';
import { openSshProxy } from '../src/internal/ssh-proxy.js';
import { FakeMongoServer, ScramServer } from './fake-mongo.js';
import { drain } from './helpers.js';
import { canonical, seedDocuments } from './seed.js';

// SSH mode against the real OpenSSH sshd on 127.0.0.1:2222 and the FAKE MongoDB wire-protocol server of this package
// (no MongoDB can run here): "remote" is this machine seen through sshd, whose user `sshtest` reaches the fake over
// loopback. The driver goes through the SSH port forward; the tools mode runs FAKE mongodump/mongorestore shell
// scripts as `sshtest` (the MongoDB Database Tools are not installed here either).
const PASSWORD = `Ssh"-\\x'#$;${randomBytes(6).toString('hex')}`;
const ENCODED = encodeURIComponent(PASSWORD);
/** A byte count no other process on the machine uses, to find the fake's `head` child in the process list. */
const ENDLESS = 987_654_321;
let sshd: SshdState;
let sshKey: string;
let fake: FakeMongoServer;
let bin: string;
let rec: string;

const signal = () => new AbortController().signal;

function sshSource(overrides: Record<string, unknown> = {}, ssh: Record<string, unknown> = {}, context: Partial<AdapterContext> = {}): SourceAdapter {
  const config = {
    uri: fake.uri,
    username: 'app',
    password: PASSWORD,
    method: 'driver',
    batchSize: 500,
    ssh: { host: sshd.host, port: sshd.port, username: sshd.user, hostKeySha256: sshd.hostKeySha256, ...ssh },
    sshPrivateKey: sshKey,
    ...overrides,
  };
  return createAdapterInstance<SourceAdapter>(definition, config, context);
}

/** A FAKE tool for the SSH user: answers --version, records argv, its config (and what kind of file it is), env and ps. */
function fakeTool(name: string, body: string): void {
  const script = `#!/bin/sh
# FAKE ${name} for the tests: the MongoDB Database Tools are not installed on this machine.
if [ "$1" = --version ]; then echo '${name} version: 100.0.0-fake'; exit 0; fi
REC='${rec}'
printf '%s\\n' "$@" > "$REC/${name}-argv"
prev=""; for a in "$@"; do [ "$prev" = "--config" ] && cfg="$a"; prev="$a"; done
stat -L -c %F "$cfg" > "$REC/${name}-config-kind"; cat "$cfg" > "$REC/${name}-config"
env > "$REC/${name}-env"
ps -o args= -p $$ > "$REC/${name}-ps"
${body}
`;
  writeFileSync(join(bin, name), script, { mode: 0o755 });
}
const recorded = (file: string) => readFileSync(join(rec, file), 'utf8');

/** The sshtest user's processes that belong to this file's fake tools (other suites use sshtest at the same time). */
function fakeToolProcesses(): string[] {
  return execFileSync('ps', ['-u', sshd.user, '-o', 'args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(bin) || line.includes(String(ENDLESS)));
}

/** Files directly in /tmp owned by the SSH user that hold the password (the SDK's remote secret file must be gone). */
function remoteFilesHoldingThePassword(uid: number): string[] {
  return readdirSync('/tmp')
    .map((name) => join('/tmp', name))
    .filter((path) => {
      try {
        const stat = statSync(path);
        return stat.isFile() && stat.uid === uid && readFileSync(path, 'utf8').includes(PASSWORD);
      } catch {
        return false;
      }
    });
}

beforeAll(async () => {
  sshd = sshdState();
  sshKey = readFileSync(sshd.keyPath, 'utf8');
  fake = await FakeMongoServer.start();
  // The fake accepts exactly this login (SCRAM-SHA-256): the driver authenticates for real, through the tunnel.
  fake.scram = new ScramServer('app', PASSWORD);
  const uid = Number(execFileSync('id', ['-u', sshd.user], { encoding: 'utf8' }).trim());
  bin = mkdtempSync('/tmp/holdfast-fake-mongotools-ssh-');
  chmodSync(bin, 0o755);
  rec = join(bin, 'records');
  mkdirSync(rec);
  chownSync(rec, uid, uid);
});

afterAll(async () => {
  await fake?.stop();
  if (bin) rmSync(bin, { recursive: true, force: true });
});

beforeEach(() => {
  fake.commands.length = 0;
  fake.data.clear();
  const shop = fake.collection('shop', 'orders', true)!;
  shop.docs.push(...seedDocuments(1200));
  shop.indexes.push({ v: 2, key: { email: 1 }, name: 'email_1', unique: true });
  for (const file of readdirSync(rec)) rmSync(join(rec, file), { force: true });
  fakeTool('mongodump', `printf '\\155\\342\\231\\201'; head -c 3000000 /dev/zero`);
  fakeTool('mongorestore', `cat > "$REC/mongorestore-stdin"`);
});

describe('source-mongodb in SSH mode (real sshd on 127.0.0.1:2222, fake MongoDB wire protocol server)', () => {
  it('driver mode checks, dumps and restores through the SSH port forward (fake MongoDB), document by document, and closes the tunnel', async () => {
    const adapter = sshSource();
    const health = await adapter.check();
    expect(health).toMatchObject({ ok: true, version: '7.0.12' });
    expect(health.message).toBe(`MongoDB Community 7.0.12 at 127.0.0.1:${fake.port} over SSH via 127.0.0.1:2222`);
    expect(await adapter.listDatabases()).toEqual(['admin', 'shop']);
    expect(await waitFor(() => ownConnectionsTo(sshd.port) === 0 && fake.openConnections === 0)).toBe(true);

    const handle = await adapter.dump({ databases: ['shop'], signal: signal() });
    // The fake is served, but not by this process: every driver connection arrives through sshd.
    expect(ownConnectionsTo(sshd.port)).toBeGreaterThan(0);
    expect(fake.openConnections).toBeGreaterThan(0);
    expect(ownConnectionsTo(fake.port)).toBe(0);
    const bytes = await drain(handle.stream);
    expect(await handle.done).toMatchObject({ bytes: bytes.length, databases: ['shop'], engineVersion: '7.0.12' });
    expect(handle.extension).toBe('.hfmongo');
    expect(fake.names()).toEqual(expect.arrayContaining(['saslStart', 'saslContinue', 'find', 'getMore']));

    await adapter.restore(Readable.from([bytes]), { target: { database: 'shop_copy' }, signal: signal() });
    const original = fake.collection('shop', 'orders')!;
    const copy = fake.collection('shop_copy', 'orders')!;
    expect(copy.docs).toHaveLength(1200);
    copy.docs.forEach((doc, i) => expect(canonical(doc)).toBe(canonical(original.docs[i])));
    expect(copy.indexes.map((index) => index.name)).toEqual(['_id_', 'email_1']);
    // After the run no SSH connection of this process and no forwarded connection to the fake is left.
    expect(await waitFor(() => ownConnectionsTo(sshd.port) === 0 && fake.openConnections === 0)).toBe(true);
  });

  it('aborting a driver-mode dump over SSH rejects done with ABORTED and closes the cursor, the forwards and the SSH connection (fake MongoDB)', async () => {
    const controller = new AbortController();
    const handle = await sshSource({ batchSize: 100 }).dump({ databases: ['shop'], signal: controller.signal });
    const drained = pipeline(handle.stream, new PassThrough({ highWaterMark: 1024 }), new Writable({ highWaterMark: 1024, write: (_c, _e, cb) => setTimeout(cb, 5) }));
    expect(ownConnectionsTo(sshd.port)).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    await expect(drained).rejects.toBeTruthy();
    await expect(handle.done).rejects.toSatisfy((e: unknown) => isAdapterError(e) && e.code === 'ABORTED');
    expect(await waitFor(() => ownConnectionsTo(sshd.port) === 0 && fake.openConnections === 0)).toBe(true);
    expect(fake.cursors.size).toBe(0);
  });

  it('the local end of the tunnel serves only the driver: SOCKS5 with credentials made for it, others refused (fake MongoDB)', async () => {
    const target = { host: sshd.host, port: sshd.port, username: sshd.user, privateKey: sshKey, hostKeySha256: sshd.hostKeySha256 };
    const proxy = await openSshProxy(target, 5000);
    try {
      const { proxyHost, proxyPort, proxyUsername, proxyPassword } = proxy.options;
      expect(proxyHost).toBe('127.0.0.1');
      const via = (userId?: string, password?: string) =>
        SocksClient.createConnection({
          command: 'connect',
          destination: { host: '127.0.0.1', port: fake.port },
          proxy: { host: proxyHost, port: proxyPort, type: 5, userId, password },
          timeout: 5000,
        });
      await expect(via()).rejects.toThrow(/no accepted authentication type/i);
      await expect(via(proxyUsername, 'guessed')).rejects.toThrow(/authentication failed/i);
      const { socket } = await via(proxyUsername, proxyPassword);
      // The forward reached the fake from the SSH host's side (sshd), not from this process.
      expect(await waitFor(() => fake.openConnections === 1)).toBe(true);
      expect(ownConnectionsTo(fake.port)).toBe(0);
      socket.destroy();
      expect(await waitFor(() => fake.openConnections === 0)).toBe(true);
      // A destination nothing listens on is refused through SOCKS (the driver then names the host as unreachable).
      await expect(
        SocksClient.createConnection({ command: 'connect', destination: { host: '127.0.0.1', port: 1 }, proxy: { host: proxyHost, port: proxyPort, type: 5, userId: proxyUsername, password: proxyPassword }, timeout: 5000 }),
      ).rejects.toThrow(/refused/i);
    } finally {
      await proxy.close();
    }
    expect(await waitFor(() => ownConnectionsTo(sshd.port) === 0)).toBe(true);
  });

  it('takes the SSH login from the "ssh" credential profile (SSH_KEY) when the config has none (fake MongoDB)', async () => {
    const adapter = sshSource({ sshPrivateKey: undefined }, { username: undefined }, { credentials: { ssh: { username: sshd.user, privateKey: sshKey } } });
    expect(await adapter.check()).toMatchObject({ ok: true });
    const withPassword = sshSource({ sshPrivateKey: undefined }, { username: undefined }, { credentials: { ssh: { username: sshd.user, password: sshd.password } } });
    expect(await withPassword.detectVersion()).toEqual({ version: '7.0.12', edition: 'MongoDB Community' });
    const error = await sshSource({ sshPrivateKey: undefined }, { username: undefined }).dump({ databases: ['shop'], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toContain('SSH mode needs a username');
  });

  it('a wrong SSH password and a wrong host key pin fail before any byte, named, without the secret', async () => {
    const wrongPassword = sshSource({ sshPrivateKey: undefined, sshPassword: 'Wrong-Ssh-Pass-77' });
    const health = await wrongPassword.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/SSH authentication failed: login to 127\.0\.0\.1:2222 as sshtest failed/);
    expect(health.message).not.toContain('Wrong-Ssh-Pass-77');
    const wrongPin = sshSource({}, { hostKeySha256: `SHA256:${'D'.repeat(43)}` });
    const error = await wrongPin.dump({ databases: ['shop'], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('AUTH');
    expect((error as Error).message).toMatch(/SSH host key mismatch: host key of 127\.0\.0\.1:2222 is SHA256:\S+, not the pinned SHA256:D{43}/);
    expect(fake.commands).toEqual([]);
  });

  it('tools mode runs the FAKE mongodump on the SSH host with the credentials only in a pipe on fd 3', async () => {
    const handle = await sshSource({ method: 'tools', binDirectory: bin }).dump({ databases: ['shop'], signal: signal() });
    const bytes = await drain(handle.stream);
    expect(await handle.done).toMatchObject({ bytes: 3_000_004, databases: ['shop'] });
    expect(handle.extension).toBe('.archive');
    expect(bytes.subarray(0, 4)).toEqual(Buffer.from([0x6d, 0xe2, 0x99, 0x81]));
    expect(recorded('mongodump-argv').trim().split('\n')).toEqual(['--config', '/dev/fd/3', '--archive', '--db', 'shop']);
    expect(recorded('mongodump-ps').trim()).toBe(`/bin/sh ${bin}/mongodump --config /dev/fd/3 --archive --db shop`);
    // The config is a pipe, not a file; it holds the login exactly; the tool's environment does not.
    expect(recorded('mongodump-config-kind').trim()).toBe('fifo');
    expect(recorded('mongodump-config')).toBe(`uri: "mongodb://app:${ENCODED}@127.0.0.1:${fake.port}/?directConnection=true&authSource=admin"\n\n`);
    expect(recorded('mongodump-env')).not.toContain('HOLDFAST_MONGO_TOOL_CONFIG');
    expect(recorded('mongodump-env')).not.toContain(ENCODED);
    expect(remoteFilesHoldingThePassword(statSync(rec).uid)).toEqual([]);
    expect(await waitFor(() => ownConnectionsTo(sshd.port) === 0 && fake.openConnections === 0)).toBe(true);
  });

  it('tools mode restores an archive with the FAKE mongorestore on the SSH host, stdin streamed over the channel', async () => {
    const archive = Buffer.concat([Buffer.from([0x6d, 0xe2, 0x99, 0x81]), randomBytes(300_000)]);
    const result = await sshSource({ method: 'tools', binDirectory: bin }).restore(Readable.from([archive.subarray(0, 1000), archive.subarray(1000)]), {
      target: { databaseMapping: { shop: 'shop_copy' } },
      signal: signal(),
    });
    expect(result.warnings).toEqual([]);
    expect(recorded('mongorestore-argv').trim().split('\n')).toEqual(['--config', '/dev/fd/3', '--archive', '--drop', '--nsFrom', 'shop.*', '--nsTo', 'shop_copy.*']);
    expect(recorded('mongorestore-config')).toContain(`app:${ENCODED}@127.0.0.1:${fake.port}`);
    expect(readFileSync(join(rec, 'mongorestore-stdin')).equals(archive)).toBe(true);
    expect(recorded('mongorestore-ps')).not.toContain(ENCODED);
  });

  it('cancelling a tools-mode dump kills the FAKE mongodump on the SSH host; while it runs no ps line shows the password', async () => {
    fakeTool('mongodump', `printf '\\155\\342\\231\\201'; head -c ${ENDLESS} /dev/zero`);
    const before = await listChildProcesses();
    const controller = new AbortController();
    const handle = await sshSource({ method: 'tools', binDirectory: bin }).dump({ databases: ['shop'], signal: controller.signal });
    const drained = pipeline(handle.stream, new PassThrough({ highWaterMark: 1024 }), new Writable({ highWaterMark: 1024, write: (_c, _e, cb) => setTimeout(cb, 5) }));
    expect(await waitFor(() => fakeToolProcesses().some((line) => line.includes(`head -c ${ENDLESS}`)))).toBe(true);
    const lines = allCommandLines();
    expect(lines).toContain(`/bin/sh ${bin}/mongodump --config /dev/fd/3 --archive --db shop`);
    expect(lines.filter((line) => line.includes(PASSWORD) || line.includes(ENCODED) || line.includes('HOLDFAST_MONGO_TOOL_CONFIG='))).toEqual([]);
    controller.abort();
    await expect(drained).rejects.toBeTruthy();
    await expect(handle.done).rejects.toSatisfy((e: unknown) => isAdapterError(e) && e.code === 'ABORTED');
    expect(await waitFor(() => fakeToolProcesses().length === 0)).toBe(true);
    expect(await waitForNoNewChildren(before)).toEqual([]);
    expect(await waitFor(() => ownConnectionsTo(sshd.port) === 0 && fake.openConnections === 0)).toBe(true);
  });

  it('method "tools" with mongodump missing on the SSH host fails before the first byte; "auto" falls back to the driver (fake MongoDB)', async () => {
    const missing = '/nonexistent/holdfast-bin';
    const error = await sshSource({ method: 'tools', binDirectory: missing }).dump({ databases: ['shop'], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toContain(`mongodump was not found in ${missing} of 127.0.0.1`);
    const handle = await sshSource({ method: 'auto', binDirectory: missing }).dump({ databases: ['shop'], signal: signal() });
    await drain(handle.stream);
    await handle.done;
    expect(handle.extension).toBe('.hfmongo');
  });
});
