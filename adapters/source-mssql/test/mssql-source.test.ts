import { execFileSync } from 'node:child_process';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AdapterError, createLocalPathPolicy, type SourceAdapter } from '@holdfast/sdk';
import { createAdapterInstance } from '@holdfast/testkit';
import definition, { mssqlSourceConfig } from '../src/index.js';
import { parseBak } from './fake-tds/bak-file.js';
import { FakeMssqlServer } from './fake-tds/fake-mssql.js';
import { drain, filesIn, mssqlSource, PASSWORD, removeAll, seedDatabase, sharedConfig, sshBackupDir, sshConfig, tempDir } from './helpers.js';

const VERSION = "SELECT CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)) AS version, CAST(SERVERPROPERTY('Edition') AS nvarchar(128)) AS edition;";
const DATABASES = "SELECT name, state_desc FROM sys.databases WHERE name NOT IN (N'master', N'tempdb', N'model', N'msdb') ORDER BY name;";
const DEFAULT_PATHS =
  "SELECT CAST(SERVERPROPERTY('InstanceDefaultDataPath') AS nvarchar(4000)) AS dataPath, CAST(SERVERPROPERTY('InstanceDefaultLogPath') AS nvarchar(4000)) AS logPath;";

const fake = await FakeMssqlServer.start();
afterAll(() => fake.stop());

let dir: string;
beforeEach(async () => {
  dir = await tempDir('unit');
  fake.statements.length = 0;
  fake.databases.clear();
  fake.backupDelayMs = 0;
  fake.backupFileMode = 0o644;
  fake.productVersion = '16.0.4135.4';
});
afterEach(() => removeAll(dir));

const signal = () => new AbortController().signal;

/** The file name part of the BACKUP statement's DISK literal. */
function backupFile(statement: string): string {
  return /TO DISK = N'([^']*)'/.exec(statement)![1]!;
}

async function rejection(promise: Promise<unknown>): Promise<AdapterError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AdapterError);
  return error as AdapterError;
}

describe('dump against the fake SQL Server (fake)', () => {
  // The names a peer broke on, plus the two characters that need escaping inside [ ] and N' '.
  const names: [string, string][] = [
    ['shop-eu', '[shop-eu]'],
    ['shop.eu', '[shop.eu]'],
    ['shop eu', '[shop eu]'],
    ['odd]name', '[odd]]name]'],
    ['[bracketed]]', '[[bracketed]]]]]'],
    ["o'brien", "[o'brien]"],
  ];
  for (const [name, quoted] of names) {
    it(`sends exactly version, database list and BACKUP DATABASE ${quoted}, streams the .bak and deletes it (fake)`, async () => {
      seedDatabase(fake, name);
      seedDatabase(fake, 'other');
      const handle = await mssqlSource(sharedConfig(fake, dir)).dump({ databases: [name], signal: signal() });
      const bytes = await drain(handle.stream);
      const stats = await handle.done;
      const [version, list, backup, ...rest] = fake.adapterStatements;
      expect([version, list, rest]).toEqual([VERSION, DATABASES, []]);
      const file = backupFile(backup!);
      expect(file).toMatch(new RegExp(`^${dir}/holdfast-backup-[A-Za-z0-9_.-]+-\\d{8}T\\d{6}Z-[0-9a-f]{12}\\.bak$`));
      const literal = (text: string) => `N'${text.replaceAll("'", "''")}'`;
      expect(backup).toBe(
        `BACKUP DATABASE ${quoted} TO DISK = ${literal(file)} WITH COPY_ONLY, FORMAT, INIT, CHECKSUM, NAME = ${literal(`Holdfast backup of ${name}`)};`,
      );
      // What the fake parsed out of the quoted name is the database it backed up.
      const parsed = parseBak(bytes);
      expect(parsed.header.databaseName).toBe(name);
      expect(parsed.pages.equals(fake.database(name)!.pages)).toBe(true);
      expect(stats).toMatchObject({ bytes: bytes.length, databases: [name], engineVersion: '16.0.4135.4' });
      expect(handle.extension).toBe('.bak');
      expect(filesIn(dir)).toEqual([]);
    });
  }

  it('adds COMPRESSION and drops COPY_ONLY when configured (fake)', async () => {
    seedDatabase(fake, 'shop');
    const handle = await mssqlSource(sharedConfig(fake, dir, { copyOnly: false, compression: true, database: 'shop' })).dump({ databases: [], signal: signal() });
    await drain(handle.stream);
    expect(fake.adapterStatements[2]).toMatch(/^BACKUP DATABASE \[shop\] TO DISK = N'[^']+' WITH FORMAT, INIT, CHECKSUM, COMPRESSION, NAME = N'Holdfast backup of shop';$/);
  });

  it('a wrong password fails with AUTH naming the login, before any BACKUP, without the password (fake)', async () => {
    seedDatabase(fake, 'shop');
    const error = await rejection(mssqlSource(sharedConfig(fake, dir, { password: 'wrong-secret-1' })).dump({ databases: ['shop'], signal: signal() }));
    expect(error.code).toBe('AUTH');
    expect(error.message).toContain(`login to SQL Server at 127.0.0.1:${fake.port} as "sa" failed: Login failed for user 'sa'.`);
    expect(error.message).not.toContain('wrong-secret-1');
    expect(fake.logins.at(-1)).toMatchObject({ userName: 'sa', password: 'wrong-secret-1', database: 'master', appName: 'holdfast' });
    expect(fake.adapterStatements).toEqual([]);
    expect(filesIn(dir)).toEqual([]);
  });

  it('an unreachable host fails with TRANSIENT naming host, port and cause (fake-free: a closed port)', async () => {
    const error = await rejection(
      mssqlSource({ ...sharedConfig(fake, dir), port: 1, connectTimeoutSeconds: 2 }).dump({ databases: ['shop'], signal: signal() }),
    );
    expect(error.code).toBe('TRANSIENT');
    expect(error.message).toMatch(/cannot reach SQL Server at 127\.0\.0\.1:1: .*ECONNREFUSED/);
  });

  it('an unknown database fails with NOT_FOUND naming it, before any BACKUP (fake)', async () => {
    seedDatabase(fake, 'shop');
    const error = await rejection(mssqlSource(sharedConfig(fake, dir)).dump({ databases: ['sh0p'], signal: signal() }));
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toContain('database "sh0p" does not exist on the server (found: shop)');
    expect(fake.adapterStatements).toEqual([VERSION, DATABASES]);
    expect(filesIn(dir)).toEqual([]);
  });

  it('refuses several databases in one dump and asks for a name when the server has several (fake)', async () => {
    seedDatabase(fake, 'a');
    seedDatabase(fake, 'b');
    const several = await rejection(mssqlSource(sharedConfig(fake, dir)).dump({ databases: ['a', 'b'], signal: signal() }));
    expect(several.code).toBe('CONFIG');
    expect(several.message).toContain('one database');
    const unnamed = await rejection(mssqlSource(sharedConfig(fake, dir)).dump({ databases: [], signal: signal() }));
    expect(unnamed.message).toContain('name the database to back up');
  });

  it('a BACKUP the server refuses (directory missing on the server) reports its messages and a hint (fake)', async () => {
    seedDatabase(fake, 'shop');
    const error = await rejection(mssqlSource(sharedConfig(fake, dir, { backupDirectory: '/nonexistent/hf-mssql' })).dump({ databases: ['shop'], signal: signal() }));
    expect(error.code).toBe('CONFIG');
    expect(error.message).toContain("Cannot open backup device '/nonexistent/hf-mssql/holdfast-backup-shop-");
    expect(error.message).toContain('(error 3201) BACKUP DATABASE is terminating abnormally. (error 3013)');
    expect(error.message).toContain('does backupDirectory exist on the server');
  });

  it('aborting while BACKUP runs cancels it with a TDS ATTENTION and leaves no file (fake)', async () => {
    seedDatabase(fake, 'shop');
    fake.backupDelayMs = 1500;
    const attentions = fake.attentions;
    const controller = new AbortController();
    const dump = mssqlSource(sharedConfig(fake, dir)).dump({ databases: ['shop'], signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort();
    const aborted = Date.now();
    const error = await rejection(dump);
    // The ATTENTION was acknowledged: no wait for tedious's 5 s cancel timeout.
    expect(Date.now() - aborted).toBeLessThan(2000);
    expect(error.code).toBe('ABORTED');
    expect(fake.attentions).toBe(attentions + 1);
    await new Promise((resolve) => setTimeout(resolve, 1700)); // past the moment the fake would have written the file
    expect(filesIn(dir)).toEqual([]);
  });

  it('never puts the password into a statement or any process command line (fake)', async () => {
    seedDatabase(fake, 'shop');
    const handle = await mssqlSource(sharedConfig(fake, dir)).dump({ databases: ['shop'], signal: signal() });
    const commandLines = execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' });
    await drain(handle.stream);
    expect(commandLines).not.toContain(PASSWORD);
    expect(fake.statements.join('\n')).not.toContain(PASSWORD);
    expect(fake.logins.at(-1)!.password).toBe(PASSWORD);
  });
});

describe('restore against the fake SQL Server (fake)', () => {
  async function backupOf(name: string): Promise<Buffer> {
    const handle = await mssqlSource(sharedConfig(fake, dir)).dump({ databases: [name], signal: signal() });
    const bytes = await drain(handle.stream);
    fake.statements.length = 0;
    return bytes;
  }

  it("uploads the .bak, reads header and file list, restores WITH MOVE under a quoted new name and deletes the upload (fake)", async () => {
    const original = seedDatabase(fake, 'shop-eu');
    const bytes = await backupOf('shop-eu');
    const target = "shop eu]'copy";
    const result = await mssqlSource(sharedConfig(fake, dir)).restore(Readable.from([bytes]), { target: { database: target }, signal: signal() });
    expect(result.warnings).toEqual([]);
    const [version, list, header, fileList, paths, restore, ...rest] = fake.adapterStatements;
    expect([version, list, paths, rest]).toEqual([VERSION, DATABASES, DEFAULT_PATHS, []]);
    const file = /FROM DISK = N'([^']*)'/.exec(header!)![1]!;
    expect(file).toMatch(new RegExp(`^${dir}/holdfast-restore-shop_eu_copy-\\d{8}T\\d{6}Z-[0-9a-f]{12}\\.bak$`));
    expect(header).toBe(`RESTORE HEADERONLY FROM DISK = N'${file}';`);
    expect(fileList).toBe(`RESTORE FILELISTONLY FROM DISK = N'${file}';`);
    expect(restore).toBe(
      `RESTORE DATABASE [shop eu]]'copy] FROM DISK = N'${file}' WITH ` +
        "MOVE N'shop_eu' TO N'/var/opt/mssql/data/shop_eu_copy_shop_eu.mdf', " +
        "MOVE N'shop_eu_log' TO N'/var/opt/mssql/log/shop_eu_copy_shop_eu_log.ldf', RECOVERY;",
    );
    const copy = fake.database(target)!;
    expect(copy.rows).toEqual(original.rows);
    expect(copy.pages.equals(original.pages)).toBe(true);
    expect(filesIn(dir)).toEqual([]);
  });

  it('restores under the original name (or its mapping) when no target is given, into configured directories (fake)', async () => {
    seedDatabase(fake, 'shop');
    const bytes = await backupOf('shop');
    fake.databases.delete('shop');
    const config = sharedConfig(fake, dir, { restoreDataDirectory: 'D:\\Data', restoreLogDirectory: 'L:\\Logs\\' });
    await mssqlSource(config).restore(Readable.from([bytes]), { target: { databaseMapping: { shop: 'shop_v2' } }, signal: signal() });
    expect(fake.adapterStatements).not.toContain(DEFAULT_PATHS);
    expect(fake.adapterStatements.at(-1)).toContain(
      "[shop_v2] FROM DISK = N'" + dir,
    );
    expect(fake.adapterStatements.at(-1)).toContain("WITH MOVE N'shop' TO N'D:\\Data\\shop_v2_shop.mdf', MOVE N'shop_log' TO N'L:\\Logs\\shop_v2_shop_log.ldf', RECOVERY;");
    expect(fake.database('shop_v2')).toBeDefined();
  });

  it('refuses to overwrite an existing database before uploading anything, unless replaceExisting (fake)', async () => {
    const original = seedDatabase(fake, 'shop');
    const bytes = await backupOf('shop');
    seedDatabase(fake, 'live', 4096);
    const error = await rejection(mssqlSource(sharedConfig(fake, dir)).restore(Readable.from([bytes]), { target: { database: 'LIVE' }, signal: signal() }));
    expect(error.code).toBe('CONFIG');
    expect(error.message).toContain('database "live" already exists');
    expect(fake.adapterStatements).toEqual([VERSION, DATABASES]);
    expect(filesIn(dir)).toEqual([]);

    fake.statements.length = 0;
    const result = await mssqlSource(sharedConfig(fake, dir, { replaceExisting: true })).restore(Readable.from([bytes]), { target: { database: 'live' }, signal: signal() });
    expect(result.warnings).toEqual(['database "live" was replaced']);
    expect(fake.adapterStatements[5]).toBe('ALTER DATABASE [live] SET SINGLE_USER WITH ROLLBACK IMMEDIATE;');
    expect(fake.adapterStatements[6]).toMatch(/^RESTORE DATABASE \[live\] FROM DISK = N'.*', REPLACE, RECOVERY;$/);
    expect(fake.database('live')!.pages.equals(original.pages)).toBe(true);
  });

  it('aborting during the upload rejects with ABORTED, runs no RESTORE and deletes the partial upload (fake)', async () => {
    const endless = new PassThrough();
    endless.write(Buffer.concat([Buffer.from('TAPE'), Buffer.alloc(256 * 1024)]));
    const controller = new AbortController();
    const restore = mssqlSource(sharedConfig(fake, dir)).restore(endless, { target: { database: 'never' }, signal: controller.signal });
    const until = Date.now() + 5000;
    while (filesIn(dir).length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(filesIn(dir)).toHaveLength(1);
    controller.abort();
    const error = await rejection(restore);
    expect(error.code).toBe('ABORTED');
    expect(fake.adapterStatements).toEqual([VERSION, DATABASES]);
    expect(filesIn(dir)).toEqual([]);
  });

  it('a config error in SSH mode rejects (never throws synchronously) (fake)', async () => {
    const config = { ...sharedConfig(fake, dir), sharedDirectory: undefined, ssh: { hostKeySha256: `SHA256:${'A'.repeat(43)}` } };
    const source = mssqlSource(config);
    const dump = source.dump({ databases: ['x'], signal: signal() });
    expect(dump).toBeInstanceOf(Promise);
    const error = await rejection(dump);
    expect(error.code).toBe('CONFIG');
    expect(error.message).toContain('SSH mode needs a username');
  });

  it('refuses a stream that is not a .bak before uploading it (fake)', async () => {
    const error = await rejection(
      mssqlSource(sharedConfig(fake, dir)).restore(Readable.from([Buffer.from('-- a SQL script, not a backup\n')]), { target: { database: 'x' }, signal: signal() }),
    );
    expect(error.code).toBe('CONFIG');
    expect(error.message).toContain('not a SQL Server .bak file');
    expect(fake.adapterStatements).toEqual([VERSION, DATABASES]);
    expect(filesIn(dir)).toEqual([]);
  });

  it('refuses a backup from a newer major version before RESTORE DATABASE runs (fake)', async () => {
    seedDatabase(fake, 'shop');
    const bytes = await backupOf('shop');
    fake.productVersion = '15.0.2000.5';
    const error = await rejection(mssqlSource(sharedConfig(fake, dir)).restore(Readable.from([bytes]), { target: { database: 'older' }, signal: signal() }));
    expect(error.code).toBe('CONFIG');
    expect(error.message).toContain('made by SQL Server major version 16; this server (15.0.2000.5) is older');
    expect(fake.adapterStatements.some((statement) => statement.startsWith('RESTORE DATABASE'))).toBe(false);
    expect(filesIn(dir)).toEqual([]);
  });
});

describe('discovery, health and config (fake)', () => {
  it('detects version and edition, and sees a changed version on the next call (fake)', async () => {
    const source = mssqlSource(sharedConfig(fake, dir));
    expect(await source.detectVersion()).toEqual({ version: '16.0.4135.4', edition: 'Developer Edition (64-bit)' });
    fake.productVersion = '16.0.4145.4';
    expect((await source.detectVersion()).version).toBe('16.0.4145.4');
    expect(fake.adapterStatements).toEqual([VERSION, VERSION]);
  });

  it('lists user databases with the system ones excluded in the query (fake)', async () => {
    seedDatabase(fake, 'b-db', 1024);
    seedDatabase(fake, 'a.db', 1024);
    expect(await mssqlSource(sharedConfig(fake, dir)).listDatabases()).toEqual(['a.db', 'b-db']);
    expect(fake.adapterStatements).toEqual([DATABASES]);
  });

  it('check() reports the version, and fails with the cause for a missing shared directory or a wrong password (fake)', async () => {
    const good = await mssqlSource(sharedConfig(fake, dir)).check();
    expect(good).toMatchObject({ ok: true, version: '16.0.4135.4' });
    const missing = await mssqlSource(sharedConfig(fake, dir, { sharedDirectory: `${dir}/gone` })).check();
    expect(missing.ok).toBe(false);
    expect(missing.message).toContain(`sharedDirectory ${dir}/gone cannot be read: ENOENT`);
    const wrong = await mssqlSource(sharedConfig(fake, dir, { password: 'nope' })).check();
    expect(wrong.ok).toBe(false);
    expect(wrong.message).toContain("Login failed for user 'sa'");
  });

  it("sharedDirectory obeys the operator's local path policy before any BACKUP runs (fake)", async () => {
    seedDatabase(fake, 'shop');
    const allowed = await tempDir('allowed');
    try {
      const localPaths = createLocalPathPolicy({ allowedRoots: [allowed], protectedPaths: [] });
      const source = createAdapterInstance<SourceAdapter>(definition, sharedConfig(fake, dir), { localPaths });
      const error = await rejection(source.dump({ databases: ['shop'], signal: signal() }));
      expect(error.code).toBe('CONFIG');
      expect(error.message).toContain('sharedDirectory: ');
      expect(error.message).toContain('HOLDFAST_LOCAL_ROOTS');
      expect(fake.adapterStatements).toEqual([VERSION, DATABASES]);
      const inside = createAdapterInstance<SourceAdapter>(definition, sharedConfig(fake, allowed), { localPaths });
      expect((await inside.check()).ok).toBe(true);
    } finally {
      await removeAll(allowed);
    }
  });

  it('the config needs exactly one of ssh and sharedDirectory', () => {
    const base = { host: 'h', user: 'u', backupDirectory: '/b' };
    expect(mssqlSourceConfig.safeParse(base).success).toBe(false);
    expect(mssqlSourceConfig.safeParse({ ...base, sharedDirectory: '/mnt/b' }).success).toBe(true);
    expect(
      mssqlSourceConfig.safeParse({ ...base, sharedDirectory: '/mnt/b', ssh: { hostKeySha256: `SHA256:${'A'.repeat(43)}` } }).success,
    ).toBe(false);
  });
});

describe('SFTP transfer against the test sshd (fake SQL Server)', () => {
  let remoteDir: string;
  beforeEach(() => {
    remoteDir = sshBackupDir('unit');
  });
  afterEach(() => removeAll(remoteDir));

  it('aborting mid-stream deletes the .bak on the server (fake)', async () => {
    seedDatabase(fake, 'big', 8 * 1024 * 1024);
    const controller = new AbortController();
    const handle = await mssqlSource(sshConfig(fake, remoteDir)).dump({ databases: ['big'], signal: controller.signal });
    handle.stream.on('error', () => undefined);
    handle.done.catch(() => undefined);
    expect(filesIn(remoteDir)).toHaveLength(1);
    controller.abort();
    const error = await rejection(handle.done);
    expect(error.code).toBe('ABORTED');
    const until = Date.now() + 10_000;
    while (filesIn(remoteDir).length > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(filesIn(remoteDir)).toEqual([]);
  });

  it('a .bak the SSH user may not read fails with CONFIG naming the permission, and is still deleted (fake)', async () => {
    seedDatabase(fake, 'shop');
    fake.backupFileMode = 0o600; // written by the fake as root: unreadable for the SSH user
    const error = await rejection(mssqlSource(sshConfig(fake, remoteDir)).dump({ databases: ['shop'], signal: signal() }));
    expect(error.code).toBe('CONFIG');
    expect(error.message).toMatch(/cannot read sftp:\/\/127\.0\.0\.1\/.*\.bak, which SQL Server wrote: Permission denied/);
    expect(filesIn(remoteDir)).toEqual([]);
  });

  it('a wrong SSH password fails with AUTH before BACKUP runs (fake)', async () => {
    seedDatabase(fake, 'shop');
    const config = sshConfig(fake, remoteDir, { sshPrivateKey: undefined, sshPassword: 'not-the-ssh-password' });
    const error = await rejection(mssqlSource(config).dump({ databases: ['shop'], signal: signal() }));
    expect(error.code).toBe('AUTH');
    expect(error.message).toContain('SSH authentication failed');
    expect(error.message).not.toContain('not-the-ssh-password');
    expect(fake.adapterStatements).toEqual([VERSION, DATABASES]);
  });

  it('a backup directory missing on the SSH host fails before BACKUP runs (fake)', async () => {
    seedDatabase(fake, 'shop');
    const error = await rejection(mssqlSource(sshConfig(fake, `${remoteDir}/missing`)).dump({ databases: ['shop'], signal: signal() }));
    expect(error.code).toBe('CONFIG');
    expect(error.message).toContain(`${remoteDir}/missing cannot be read over SFTP`);
    expect(fake.adapterStatements).toEqual([VERSION, DATABASES]);
  });

  it('a restore over SFTP uploads the .bak as the SSH user, restores it and deletes the upload (fake)', async () => {
    const original = seedDatabase(fake, 'shop');
    const handle = await mssqlSource(sshConfig(fake, remoteDir)).dump({ databases: ['shop'], signal: signal() });
    const bytes = await drain(handle.stream);
    expect(filesIn(remoteDir)).toEqual([]);
    await mssqlSource(sshConfig(fake, remoteDir)).restore(Readable.from([bytes]), { target: { database: 'shop_copy' }, signal: signal() });
    expect(fake.database('shop_copy')!.pages.equals(original.pages)).toBe(true);
    expect(fake.database('shop_copy')!.rows).toEqual(original.rows);
    expect(filesIn(remoteDir)).toEqual([]);
  });
});
