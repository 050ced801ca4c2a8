import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError } from '@holdfast/sdk';
import { listChildProcesses, waitForNoNewChildren } from '@holdfast/testkit';
import { FakeMongoServer, ScramServer } from './fake-mongo.js';
import { drain, mongoSource } from './helpers.js';

// The MongoDB Database Tools are not installed here: these tests put FAKE mongodump/mongorestore shell scripts in a
// temp binDirectory that record their argv, their own `ps` line and the --config file they were given.
const PASSWORD = 'p@ss word/with:odd"chars';
const fake = await FakeMongoServer.start();
// The fake server accepts exactly this login (SCRAM-SHA-256), so the driver's pre-check authenticates for real.
fake.scram = new ScramServer('app', PASSWORD);
const bin = await mkdtemp(join(tmpdir(), 'holdfast-fake-mongotools-'));
const rec = join(bin, 'records');
afterAll(async () => {
  await fake.stop();
  await rm(bin, { recursive: true, force: true });
});

const RECORD = (tool: string) => `
REC='${rec}'
mkdir -p "$REC"
printf '%s\\n' "$@" > "$REC/${tool}-argv"
prev=""; for a in "$@"; do [ "$prev" = "--config" ] && cfg="$a"; prev="$a"; done
stat -c %a "$cfg" > "$REC/${tool}-mode"; cat "$cfg" > "$REC/${tool}-config"; echo "$cfg" > "$REC/${tool}-config-path"
ps -o args= -p $$ > "$REC/${tool}-ps"
`;

async function tool(name: string, body: string): Promise<void> {
  await writeFile(join(bin, name), `#!/bin/sh\n${RECORD(name)}\n${body}\n`);
  await chmod(join(bin, name), 0o755);
}
const recorded = (file: string) => readFile(join(rec, file), 'utf8');

beforeEach(async () => {
  await rm(rec, { recursive: true, force: true });
  fake.data.clear();
  fake.collection('shop', 'orders', true)!.docs.push({ _id: 1 });
  await tool('mongodump', `printf '\\155\\342\\231\\201'; head -c 3000000 /dev/zero`);
  await tool('mongorestore', `cat > "$REC/mongorestore-stdin"`);
});

const config = (extra: Record<string, unknown> = {}) => ({ uri: fake.uri, username: 'app', password: PASSWORD, method: 'auto', binDirectory: bin, ...extra });

describe('source-mongodb with fake mongodump/mongorestore tools (fake MongoDB wire protocol for the pre-check)', () => {
  it('streams mongodump --archive with the credentials only in a 0600 --config file, removed afterwards', async () => {
    const source = mongoSource(config());
    const handle = await source.dump({ databases: ['shop'], signal: new AbortController().signal });
    const bytes = await drain(handle.stream);
    expect(await handle.done).toMatchObject({ bytes: 3_000_004, databases: ['shop'] });
    expect(handle.extension).toBe('.archive');
    expect(bytes.subarray(0, 4)).toEqual(Buffer.from([0x6d, 0xe2, 0x99, 0x81]));
    const argv = (await recorded('mongodump-argv')).trim().split('\n');
    expect(argv).toEqual(['--config', expect.stringMatching(/tool\.yaml$/), '--archive', '--db', 'shop']);
    expect(await recorded('mongodump-mode')).toBe('600\n');
    expect(existsSync((await recorded('mongodump-config-path')).trim())).toBe(false);
  });

  it('puts the password into the config file and never into argv or the process list', async () => {
    const source = mongoSource(config());
    const restore = await source.restore(Readable.from([Buffer.from([0x6d, 0xe2, 0x99, 0x81]), Buffer.from('archive-body')]), {
      target: { databaseMapping: { shop: 'shop_copy' } },
      signal: new AbortController().signal,
    });
    expect(restore.warnings).toEqual([]);
    const encoded = encodeURIComponent(PASSWORD);
    expect(await recorded('mongorestore-config')).toContain(`app:${encoded}@127.0.0.1`);
    for (const file of ['mongorestore-argv', 'mongorestore-ps']) {
      const text = await recorded(file);
      expect(text).not.toContain(encoded);
      expect(text).not.toContain('p@ss');
    }
    expect((await recorded('mongorestore-argv')).trim().split('\n')).toEqual([
      '--config', expect.stringMatching(/tool\.yaml$/), '--archive', '--drop', '--nsFrom', 'shop.*', '--nsTo', 'shop_copy.*',
    ]);
    expect((await readFile(join(rec, 'mongorestore-stdin'))).subarray(4).toString()).toBe('archive-body');
  });

  it('fails a dump whose mongodump exits non-zero, with the password scrubbed from its stderr', async () => {
    await tool('mongodump', `echo "error connecting to mongodb://app:${encodeURIComponent(PASSWORD)}@db: refused" >&2; printf 'x'; exit 1`);
    const handle = await mongoSource(config()).dump({ databases: ['shop'], signal: new AbortController().signal });
    handle.stream.on('error', () => undefined);
    handle.stream.resume();
    const error = await handle.done.catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('TRANSIENT');
    expect((error as Error).message).toContain('mongodump exited with 1: error connecting to mongodb://app:***@db: refused');
  });

  it('kills mongodump when the dump is aborted and leaves no child process', async () => {
    const before = await listChildProcesses();
    const controller = new AbortController();
    const handle = await mongoSource(config()).dump({ databases: ['shop'], signal: controller.signal });
    handle.stream.on('error', () => undefined);
    controller.abort();
    const error = await handle.done.catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('ABORTED');
    expect(await waitForNoNewChildren(before)).toEqual([]);
  });

  it('refuses method "tools" when mongodump is missing, before the first byte', async () => {
    const error = await mongoSource(config({ method: 'tools', binDirectory: join(bin, 'none') }))
      .dump({ databases: ['shop'], signal: new AbortController().signal })
      .catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toContain('mongodump was not found in');
  });

  it('refuses config with a password inside the URI', () => {
    expect(() => mongoSource({ uri: 'mongodb://app:secret@127.0.0.1' })).toThrow(/password field/);
  });

  it('fails with AUTH on a wrong password before mongodump starts, naming neither password', async () => {
    const error = await mongoSource(config({ password: 'wrong-password' })).dump({ databases: ['shop'], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('AUTH');
    expect((error as Error).message).toContain('authentication failed');
    expect((error as Error).message).not.toContain('wrong-password');
    expect(fake.names()).toEqual(expect.arrayContaining(['saslStart', 'saslContinue']));
    expect(existsSync(join(rec, 'mongodump-argv'))).toBe(false);
  });
});
