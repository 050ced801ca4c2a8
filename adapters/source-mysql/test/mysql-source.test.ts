import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type SourceAdapter } from '@holdfast/sdk';
import { listChildProcesses, waitForNoNewChildren } from '@holdfast/testkit';
import definition from '../src/index.js';
import { createDatabase, definitions, dropDatabases, seed, server, sql, tableRows, uniqueName } from './helpers.js';

const created: string[] = [];
const users: string[] = [];
// Quotes, a backslash and a hash prove the option file escapes the value (a wrong escape fails the login).
const PASSWORD = `Pw"-\\x'#;${randomBytes(6).toString('hex')}`;

function source(overrides: Record<string, unknown> = {}): SourceAdapter {
  return instantiateAdapter(container, definition, { ...server, ...overrides });
}

async function database(label: string): Promise<string> {
  const name = await createDatabase(label);
  created.push(name);
  return name;
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(stream, new Writable({ write: (chunk: Buffer, _e, cb) => (chunks.push(chunk), cb()) }));
  return Buffer.concat(chunks);
}

const signal = () => new AbortController().signal;
const optionDirs = () => readdirSync(tmpdir()).filter((name) => name.startsWith('holdfast-mysql-'));

/** Option folders not in `before` that are still there after up to 3 s (another file's last until its tool's output). */
async function newOptionDirsAfterSettling(before: string[]): Promise<string[]> {
  const added = () => optionDirs().filter((name) => !before.includes(name));
  for (let i = 0; i < 200 && added().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return added();
}

afterAll(async () => {
  await dropDatabases(...created);
  for (const user of users) await sql(`DROP USER IF EXISTS '${user}'@'%'`);
});

describe('source-mysql against the local MariaDB', () => {
  let seeded: string;
  let user: string;

  beforeAll(async () => {
    seeded = await database('seed');
    await seed(seeded, 4000);
    user = `hf_mysrc_${randomBytes(4).toString('hex')}`;
    users.push(user);
    await sql(`CREATE USER ?@'%' IDENTIFIED BY ?`, [user, PASSWORD]);
    await sql(`GRANT SELECT, SHOW VIEW, TRIGGER, EVENT, LOCK TABLES ON \`${seeded}\`.* TO ?@'%'`, [user]);
    // MariaDB shows routine bodies (SHOW CREATE FUNCTION) only to their definer or with SELECT on mysql.proc.
    await sql("GRANT SELECT ON mysql.proc TO ?@'%'", [user]);
  });

  it('detects MariaDB and its version, and lists user databases without the system schemas', async () => {
    const adapter = source();
    const [row] = await sql<{ v: string }>('SELECT VERSION() AS v');
    expect(await adapter.detectVersion()).toEqual({ version: row!.v.split('-')[0], edition: 'MariaDB' });
    const names = await adapter.listDatabases();
    expect(names).toContain(seeded);
    expect(names.filter((name) => ['mysql', 'information_schema', 'performance_schema', 'sys'].includes(name))).toEqual([]);
    expect((await adapter.check()).message).toMatch(/^Connected to MariaDB \d+\.\d+/);
  });

  it('round-trips one database with its trigger, routines and event, row by row and by SHOW CREATE', async () => {
    const adapter = source({ user, password: PASSWORD });
    const dump = await adapter.dump({ databases: [seeded], signal: signal() });
    expect(dump.extension).toBe('.sql');
    const bytes = await collect(dump.stream);
    expect((await dump.done).bytes).toBe(bytes.length);
    const text = bytes.toString('utf8');
    expect(text.split('\n')[0]).toBe(`-- holdfast-mysql: {"version":1,"mode":"single","databases":["${seeded}"],"users":false}`);
    expect(text).not.toContain('CREATE DATABASE');
    expect(text).not.toContain(PASSWORD);

    const target = uniqueName('restored');
    created.push(target);
    await source().restore(Readable.from([bytes]), { target: { database: target }, signal: signal() });
    const restored = await definitions(target);
    expect(Object.keys(restored).sort()).toEqual(['event purge_audit', 'function item_count', 'procedure rename_item', 'table audit', 'table items', 'trigger items_audit']);
    expect(restored).toEqual(await definitions(seeded));
    expect(await tableRows(target)).toEqual(await tableRows(seeded));
    // The restored trigger and routine work, not only exist.
    await sql('INSERT INTO items (id, name) VALUES (999999, ?)', ['after restore'], target);
    expect(await sql('SELECT at_name FROM audit WHERE item_id = 999999', [], target)).toEqual([{ at_name: 'after restore' }]);
    expect(await sql('SELECT item_count() AS n', [], target)).toEqual([{ n: 4001 }]);
  });

  it('dumps several databases in one snapshot and restores them under mapped names', async () => {
    const second = await database('second');
    await seed(second, 50);
    const adapter = source();
    const dump = await adapter.dump({ databases: [seeded, second], signal: signal() });
    const bytes = await collect(dump.stream);
    expect((await dump.done).databases).toEqual([seeded, second]);
    expect(bytes.toString('utf8')).toContain(`USE \`${second}\`;`);
    const mapping = { [seeded]: uniqueName('m1'), [second]: uniqueName('m2') };
    created.push(...Object.values(mapping));
    // Small pieces prove the renaming copes with lines split across chunks.
    const pieces = Array.from({ length: Math.ceil(bytes.length / 997) }, (_, i) => bytes.subarray(i * 997, (i + 1) * 997));
    await adapter.restore(Readable.from(pieces), { target: { databaseMapping: mapping }, signal: signal() });
    for (const [from, to] of Object.entries(mapping)) {
      expect(await tableRows(to)).toEqual(await tableRows(from));
      expect(await definitions(to)).toEqual(await definitions(from));
    }
  });

  it('includeUsers dumps accounts and grants, and the restore recreates a dropped account', async () => {
    const account = `hf_mysrc_acct_${randomBytes(3).toString('hex')}`;
    users.push(account);
    await sql(`CREATE USER ?@'%' IDENTIFIED BY 'acct-pass'`, [account]);
    await sql(`GRANT SELECT ON \`${seeded}\`.* TO ?@'%'`, [account]);
    const grants = await sql(`SHOW GRANTS FOR ?@'%'`, [account]);
    const small = await database('users');
    await seed(small, 5);
    const adapter = source({ includeUsers: true });
    const dump = await adapter.dump({ databases: [small], signal: signal() });
    const bytes = await collect(dump.stream);
    expect(bytes.toString('utf8')).toContain(`CREATE USER IF NOT EXISTS \`${account}\`@\`%\``);
    await sql(`DROP USER ?@'%'`, [account]);
    const target = uniqueName('users_restored');
    created.push(target);
    const result = await adapter.restore(Readable.from([bytes]), { target: { database: target }, signal: signal() });
    // Accounts the restoring user may not touch (root's PROXY grant here) become warnings, never a failed restore.
    expect(result.warnings.every((line) => line.startsWith('accounts: ERROR'))).toBe(true);
    expect(await sql(`SHOW GRANTS FOR ?@'%'`, [account])).toEqual(grants);
    expect(await tableRows(target)).toEqual(await tableRows(small));
  });

  it('keeps the password out of every command line while a dump runs, and removes its option file once the tool started', async () => {
    const filesBefore = optionDirs();
    const controller = new AbortController();
    const dump = await source({ user, password: PASSWORD }).dump({ databases: [seeded], signal: controller.signal });
    // Unread, the dump is blocked on its pipe: the tool is certainly running now.
    const commandLines = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
    expect(commandLines).toMatch(/mariadb-dump --defaults-extra-file=\S+ --host 127\.0\.0\.1/);
    expect(commandLines).not.toContain(PASSWORD);
    // The option file is gone as soon as the tool produced output, long before the dump ends. Other files' dumps make
    // and remove option folders meanwhile (CI saw one appear here), so the check is that none but those seen before
    // stays; theirs last only until their tool's first output.
    expect(await newOptionDirsAfterSettling(filesBefore)).toEqual([]);
    await collect(dump.stream);
    await dump.done;
    expect(await newOptionDirsAfterSettling(filesBefore)).toEqual([]);
  });

  it('a wrong password rejects the dump before its first byte with AUTH, without the secret', async () => {
    const adapter = source({ user, password: `${PASSWORD}-wrong` });
    const error = await adapter.dump({ databases: [seeded], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('AUTH');
    expect((error as Error).message).toMatch(new RegExp(`^\\[source-mysql\\] cannot connect to 127\\.0\\.0\\.1:3306 as ${user}: Access denied`));
    expect((error as Error).message).not.toContain(PASSWORD);
    const health = await adapter.check();
    expect(health.ok).toBe(false);
    expect(health.message).not.toContain(PASSWORD);
  });

  it('an unreachable server rejects the dump with TRANSIENT naming the address', async () => {
    const error = await source({ port: 1, connectTimeoutSeconds: 2 }).dump({ databases: [], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('TRANSIENT');
    expect((error as Error).message).toMatch(/cannot connect to 127\.0\.0\.1:1 .*ECONNREFUSED/);
  });

  it('a missing dump tool rejects the dump with CONFIG naming the tool', async () => {
    const error = await source({ binDirectory: '/nonexistent/holdfast-bin' }).dump({ databases: [seeded], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toMatch(/neither mariadb-dump nor mysqldump was found in \/nonexistent\/holdfast-bin/);
  });

  it('an unknown database rejects the dump with NOT_FOUND naming it', async () => {
    const error = await source().dump({ databases: [seeded, 'hf_no_such_db'], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('NOT_FOUND');
    expect((error as Error).message).toBe('[source-mysql] unknown database "hf_no_such_db" on 127.0.0.1:3306');
  });

  it('restores a plain SQL script without the Holdfast header (a dump made elsewhere)', async () => {
    const target = uniqueName('plain');
    created.push(target);
    const script = "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20));\nINSERT INTO t VALUES (1, 'one'), (2, 'zwei');\n";
    await source().restore(Readable.from([Buffer.from(script)]), { target: { database: target }, signal: signal() });
    expect(await sql('SELECT * FROM t ORDER BY id', [], target)).toEqual([{ id: 1, v: 'one' }, { id: 2, v: 'zwei' }]);
  });

  it('a failing statement fails the restore with the client message', async () => {
    const target = uniqueName('broken');
    created.push(target);
    const script = 'CREATE TABLE t (id INT);\nINSERT INTO no_such_table VALUES (1);\n';
    await expect(source().restore(Readable.from([Buffer.from(script)]), { target: { database: target }, signal: signal() })).rejects.toThrow(
      /^\[source-mysql\] restore into ".*" failed \(exit 1\): ERROR 1146 .*no_such_table/,
    );
  });

  it('aborting mid-dump errors the stream, leaves no child process and removes the option file', async () => {
    const filesBefore = optionDirs();
    const before = await listChildProcesses();
    // About 20 MiB of rows: far more than the stream buffers and the pipe hold, so the dump cannot have finished into
    // them by the time of the abort (the 2 MiB seeded database once did on a fast run, and its dump resolved).
    const large = await database('abort');
    await sql('CREATE TABLE filler (id INT PRIMARY KEY, body TEXT NOT NULL) SELECT seq AS id, REPEAT(MD5(seq), 32) AS body FROM seq_1_to_20000', [], large);
    const controller = new AbortController();
    const dump = await source().dump({ databases: [large], signal: controller.signal });
    const drained = pipeline(dump.stream, new PassThrough({ highWaterMark: 1024 }), new Writable({ highWaterMark: 1024, write: (_c, _e, cb) => setTimeout(cb, 5) }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    await expect(drained).rejects.toBeTruthy();
    await expect(dump.done).rejects.toSatisfy((e: unknown) => isAdapterError(e) && e.code === 'ABORTED');
    // A loaded CI machine can take seconds to reap the killed tools: up to 10 s.
    expect(await waitForNoNewChildren(before, 10_000)).toEqual([]);
    expect(execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })).not.toContain(large);
    // Other files' dumps create and remove option folders meanwhile (short-lived: removed at their first output), so
    // the check is that no folder this test did not see before stays behind.
    expect(await newOptionDirsAfterSettling(filesBefore)).toEqual([]);
  });

  it('a dump whose server session is killed midway errors the stream instead of ending it', async () => {
    const big = await database('killed');
    await seed(big, 4000);
    const dump = await source().dump({ databases: [big], signal: signal() });
    const consumed = pipeline(dump.stream, new PassThrough({ highWaterMark: 1024 }), new Writable({ write: (_c, _e, cb) => setTimeout(cb, 2) }));
    const sessions = await sql<{ id: number }>('SELECT id FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()', [big]);
    expect(sessions.length).toBeGreaterThan(0);
    for (const { id } of sessions) await sql(`KILL ${Number(id)}`);
    const outcome = await Promise.allSettled([dump.done, consumed]);
    expect(outcome.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(String((outcome[0] as PromiseRejectedResult).reason)).toMatch(/dump of ".*" failed/);
  });
});
