// The throwaway MariaDB, the row writer and the process probes of mysql-pitr-faults.test.ts: the shared PITR server
// (3307) serves other suites at the same time and must not be restarted or purged, so the fault tests bring their own,
// set up as tooling/test-services/mariadb-pitr.mjs sets up that one (binary logging, server_id, ROW, FULL images).
import { execFile, spawn } from 'node:child_process';
import { chown, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { freePort, sleep } from './fault-cluster.js';

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;
/** mariadbd refuses to run as root unless told to; as root it runs as Debian's `mysql` user. */
const OS_USER = isRoot ? 'mysql' : (process.env.USER ?? 'mysql');
const WRITE_EVERY_MS = 100;

/** One commit of the writer: its id, and the client's clock once the autocommitted INSERT returned. */
export interface Commit {
  id: number;
  clientAfter: number;
}

/** A MariaDB of one test file in a temp folder; the test talks to it as `admin` over TCP, as root over its socket. */
export class OwnMariadb {
  readonly dataDir: string;
  readonly socket: string;
  private readonly config: string;

  private constructor(
    readonly dir: string,
    readonly port: number,
    readonly admin: { user: string; password: string },
  ) {
    this.dataDir = join(dir, 'data');
    this.socket = join(dir, 'mysqld.sock');
    this.config = join(dir, 'my.cnf');
  }

  static async create(admin: { user: string; password: string }): Promise<OwnMariadb> {
    const dir = await mkdtemp(join(tmpdir(), 'hf-mysql-faults-db-'));
    const server = new OwnMariadb(dir, await freePort(), admin);
    if (isRoot) {
      const ids = await userIds(OS_USER);
      await chown(dir, ids.uid, ids.gid);
    }
    await run('mariadb-install-db', ['--no-defaults', `--user=${OS_USER}`, `--datadir=${server.dataDir}`, '--auth-root-authentication-method=socket', `--auth-root-socket-user=${isRoot ? 'root' : OS_USER}`, '--skip-test-db'], { timeout: 120_000 });
    await writeFile(
      server.config,
      [
        '[mysqld]',
        `user = ${OS_USER}`,
        `datadir = ${server.dataDir}`,
        `socket = ${server.socket}`,
        `pid-file = ${join(dir, 'mariadbd.pid')}`,
        `log-error = ${join(dir, 'error.log')}`,
        `port = ${server.port}`,
        'bind-address = 127.0.0.1',
        'skip-name-resolve',
        'log_bin = mysql-bin',
        'server_id = 1',
        'binlog_format = ROW',
        'binlog_row_image = FULL',
        'expire_logs_days = 0',
        'innodb_buffer_pool_size = 32M',
        'innodb_log_file_size = 16M',
        'innodb_flush_log_at_trx_commit = 2',
        'sync_binlog = 0',
        'performance_schema = OFF',
        '',
      ].join('\n'),
    );
    await server.start();
    // REPLICATION SLAVE/CLIENT for the stream, the rest for the dump and the restore into new databases.
    await server.rootSql(`CREATE USER '${admin.user}'@'%' IDENTIFIED BY '${admin.password}'; GRANT ALL PRIVILEGES ON *.* TO '${admin.user}'@'%' WITH GRANT OPTION;`);
    return server;
  }

  /** Starts mariadbd in the background and resolves once a query answers. */
  async start(): Promise<void> {
    const child = spawn('/usr/sbin/mariadbd', [`--defaults-file=${this.config}`], { detached: true, stdio: 'ignore' });
    child.unref();
    const deadline = Date.now() + 60_000;
    while (!(await this.answers())) {
      if (Date.now() > deadline) throw new Error(`the fault MariaDB did not start: ${(await readFile(join(this.dir, 'error.log'), 'utf8').catch(() => '')).split('\n').slice(-5).join(' | ')}`);
      await sleep(100);
    }
  }

  /** A clean shutdown (mariadb-admin waits until the server is gone). */
  async stop(): Promise<void> {
    await run('mariadb-admin', ['--no-defaults', `--socket=${this.socket}`, '--user=root', 'shutdown'], { timeout: 60_000 });
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  private async answers(): Promise<boolean> {
    try {
      return (await this.rootSql('SELECT 1')).trim() === '1';
    } catch {
      return false;
    }
  }

  /** SQL as root over the socket (unix_socket authentication), for what must work before the accounts exist. */
  async rootSql(sql: string): Promise<string> {
    const { stdout } = await run('mariadb', ['--no-defaults', `--socket=${this.socket}`, '--user=root', '--batch', '--skip-column-names', '-e', sql], { timeout: 20_000 });
    return stdout;
  }

  /** An administrator connection (UTC session, DATETIME as text so values compare exactly). */
  connect(database?: string): Promise<mysql.Connection> {
    return mysql.createConnection({ host: '127.0.0.1', port: this.port, user: this.admin.user, password: this.admin.password, database, timezone: 'Z', dateStrings: true });
  }

  /** One statement on a connection of its own (connections do not survive the restart). */
  async sql<T = mysql.RowDataPacket>(text: string, values: unknown[] = []): Promise<T[]> {
    const connection = await this.connect();
    try {
      const [rows] = await connection.query(text, values);
      return rows as T[];
    } finally {
      await connection.end().catch(() => undefined);
    }
  }

  /** The server's binary log files, oldest first. */
  async binlogs(): Promise<string[]> {
    return (await this.sql<{ Log_name: string }>('SHOW BINARY LOGS')).map((row) => row.Log_name);
  }

  /** Connections reading the binary log as replicas (mariadb-binlog --stop-never shows as `Binlog Dump`). */
  async binlogDumps(): Promise<number> {
    return (await this.sql<{ Command: string }>('SHOW PROCESSLIST')).filter((row) => row.Command === 'Binlog Dump').length;
  }

  async remove(): Promise<void> {
    await this.stop().catch(async () => {
      const pid = Number(await readFile(join(this.dir, 'mariadbd.pid'), 'utf8').catch(() => '0'));
      if (pid > 1) process.kill(pid, 'SIGKILL');
    });
    await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * Inserts one row about every {@link WRITE_EVERY_MS} into `<database>.fault_rows`, storing NOW(), reconnecting when the
 * server goes away. A row whose INSERT failed may or may not have committed (the reply was lost): it is `uncertain`.
 */
export class MysqlWriter {
  readonly commits: Commit[] = [];
  readonly uncertain = new Set<number>();
  private nextId = 1;
  private running: Promise<void> | undefined;
  private isStopping = false;

  constructor(
    private readonly server: OwnMariadb,
    private readonly database: string,
  ) {}

  start(): void {
    this.isStopping = false;
    this.running = this.loop();
  }

  async stop(): Promise<Commit> {
    this.isStopping = true;
    await this.running;
    this.running = undefined;
    return this.commits[this.commits.length - 1]!;
  }

  private async loop(): Promise<void> {
    let connection: mysql.Connection | undefined;
    while (!this.isStopping) {
      if (!connection) {
        try {
          connection = await this.server.connect(this.database);
          // A connection the server ends (restart) emits 'error'; the failed query tells the loop.
          connection.on('error', () => undefined);
        } catch {
          await sleep(200);
          continue;
        }
      }
      const id = this.nextId++;
      try {
        await connection.query('INSERT INTO fault_rows VALUES (?, NOW())', [id]);
        this.commits.push({ id, clientAfter: Date.now() });
      } catch {
        this.uncertain.add(id);
        connection.destroy();
        connection = undefined;
      }
      await sleep(WRITE_EVERY_MS);
    }
    await connection?.end().catch(() => undefined);
  }
}

/** mariadb-binlog processes writing into `spoolDir`, with their parent process (from /proc). */
export async function binlogReadersOf(spoolDir: string): Promise<Array<{ pid: number; ppid: number }>> {
  const found: Array<{ pid: number; ppid: number }> = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0');
      if (!/(mariadb-binlog|mysqlbinlog)$/.test(argv[0] ?? '') || !argv.includes(`--result-file=${spoolDir}/`)) continue;
      // Field 4 of /proc/<pid>/stat, after the command name in parentheses.
      const status = await readFile(`/proc/${entry}/stat`, 'utf8');
      found.push({ pid: Number(entry), ppid: Number(status.slice(status.lastIndexOf(')') + 2).split(' ')[1]) });
    } catch {
      // the process ended while being read
    }
  }
  return found;
}

async function userIds(name: string): Promise<{ uid: number; gid: number }> {
  const line = (await readFile('/etc/passwd', 'utf8')).split('\n').find((entry) => entry.startsWith(`${name}:`));
  if (!line) throw new Error(`the OS user ${name} does not exist (Debian's mariadb-server package creates it)`);
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}
