// The throwaway PostgreSQL cluster, the row writer and the process probes of pitr-faults.test.ts: the shared PITR
// cluster serves other suites at the same time and must not be restarted, so the fault tests bring their own.
import { execFile } from 'node:child_process';
import { appendFile, chown, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
export const PG_BIN = '/usr/lib/postgresql/15/bin';
const COMMIT_EVERY_MS = 50;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One commit of the writer: the server's clock inside the insert, and the client's clock once COMMIT returned. */
export interface Commit {
  id: number;
  serverAt: number;
  clientAfter: number;
}

/** A PostgreSQL 15 cluster of one test file, in a temp folder, administered as `postgres` over its own socket. */
export class OwnCluster {
  readonly dataDir: string;
  private readonly log: string;

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {
    this.dataDir = join(dir, 'data');
    this.log = join(dir, 'postgres.log');
  }

  /** initdb, settings and pg_hba.conf as tooling/test-services/postgres-pitr.mjs writes them, start, role. */
  static async create(role: { user: string; password: string }): Promise<OwnCluster> {
    const dir = await mkdtemp(join(tmpdir(), 'hf-pitr-faults-pg-'));
    const owner = await postgresIds();
    await chown(dir, owner.uid, owner.gid);
    const cluster = new OwnCluster(dir, await freePort());
    await asPostgres(`${PG_BIN}/initdb`, ['-D', cluster.dataDir, '-U', 'postgres', '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
    // Written into postgresql.conf itself (no include): the base backups carry it and restores read it.
    await appendFile(
      join(cluster.dataDir, 'postgresql.conf'),
      [
        '',
        `listen_addresses = '127.0.0.1'`,
        `port = ${cluster.port}`,
        `unix_socket_directories = '${dir}'`,
        'wal_level = replica',
        'max_wal_senders = 10',
        'max_replication_slots = 10',
        `max_slot_wal_keep_size = '1GB'`,
        `shared_buffers = '32MB'`,
        'fsync = off',
        // synchronous_commit stays on: a commit the writer saw is in the WAL the server sends.
        '',
      ].join('\n'),
    );
    const hba = join(cluster.dataDir, 'pg_hba.conf');
    await writeFile(hba, ['local all all trust', `host replication ${role.user} 127.0.0.1/32 scram-sha-256`, 'host all all 127.0.0.1/32 scram-sha-256', ''].join('\n'));
    await chown(hba, owner.uid, owner.gid);
    await cluster.pgCtl('start');
    await cluster.sql(`CREATE ROLE ${role.user} LOGIN REPLICATION PASSWORD '${role.password}'`);
    await cluster.sql('CREATE TABLE fault_rows (id int PRIMARY KEY, committed_at timestamptz NOT NULL)');
    // The served restores take logins of the source's roles: the replication role reads the table there.
    await cluster.sql(`GRANT SELECT ON fault_rows TO ${role.user}`);
    return cluster;
  }

  async pgCtl(command: 'start' | 'restart' | 'stop', mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await asPostgres(`${PG_BIN}/pg_ctl`, ['-D', this.dataDir, '-l', this.log, '-w', '-t', '60', ...(command === 'start' ? [] : ['-m', mode]), command]);
  }

  /** One statement on a connection of its own (connections do not survive the restart of case 2). */
  async sql<T extends Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
    const client = this.client();
    await client.connect();
    try {
      return (await client.query<T>(text, values)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  client(): pg.Client {
    const client = new pg.Client({ host: this.dir, port: this.port, user: 'postgres', database: 'postgres' });
    // A connection the server ends (restart) emits 'error'; the caller sees the failed query instead.
    client.on('error', () => undefined);
    return client;
  }

  async slot(name: string): Promise<{ active: boolean; active_pid: number | null } | undefined> {
    return (await this.sql<{ active: boolean; active_pid: number | null }>('SELECT active, active_pid FROM pg_replication_slots WHERE slot_name = $1', [name]))[0];
  }

  async remove(): Promise<void> {
    await this.pgCtl('stop', 'immediate').catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * Commits one row about every {@link COMMIT_EVERY_MS} while running, reconnecting when the server goes away. A row
 * whose INSERT failed may or may not have committed (the reply was lost): it is `uncertain`, and a restore may hold
 * it or not. Every other attempted id is in `commits`.
 */
export class Writer {
  readonly commits: Commit[] = [];
  readonly uncertain = new Set<number>();
  private nextId = 1;
  private running: Promise<void> | undefined;
  private isStopping = false;

  constructor(private readonly cluster: OwnCluster) {}

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
    let client: pg.Client | undefined;
    while (!this.isStopping) {
      if (!client) {
        const fresh = this.cluster.client();
        try {
          await fresh.connect();
          client = fresh;
        } catch {
          await fresh.end().catch(() => undefined);
          await sleep(200);
          continue;
        }
      }
      const id = this.nextId++;
      try {
        const { rows } = await client.query<{ at: Date }>('INSERT INTO fault_rows VALUES ($1, clock_timestamp()) RETURNING committed_at AS at', [id]);
        this.commits.push({ id, serverAt: rows[0]!.at.getTime(), clientAfter: Date.now() });
      } catch {
        this.uncertain.add(id);
        await client.end().catch(() => undefined);
        client = undefined;
      }
      await sleep(COMMIT_EVERY_MS);
    }
    await client?.end().catch(() => undefined);
  }
}

/** pg_receivewal processes writing into `spoolDir`, with their parent process (from /proc). */
export async function receiversOf(spoolDir: string): Promise<Array<{ pid: number; ppid: number }>> {
  const found: Array<{ pid: number; ppid: number }> = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0');
      if (!argv[0]?.endsWith('pg_receivewal') || !argv.includes(spoolDir)) continue;
      // Field 4 of /proc/<pid>/stat, after the command name in parentheses (which may hold spaces).
      const status = await readFile(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(status.slice(status.lastIndexOf(')') + 2).split(' ')[1]);
      found.push({ pid: Number(entry), ppid });
    } catch {
      // the process ended while being read
    }
  }
  return found;
}

export async function freePort(): Promise<number> {
  const listener = createServer();
  const port = await new Promise<number>((resolve) => listener.listen(0, '127.0.0.1', () => resolve((listener.address() as { port: number }).port)));
  await new Promise((resolve) => listener.close(resolve));
  return port;
}

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const line = (await readFile('/etc/passwd', 'utf8')).split('\n').find((entry) => entry.startsWith('postgres:'));
  if (!line) throw new Error('the OS user postgres does not exist (Debian\'s postgresql package creates it)');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** initdb and postgres refuse to run as root: the test (root) runs them as `postgres`. */
export async function asPostgres(command: string, args: string[]): Promise<void> {
  await run('runuser', ['-u', 'postgres', '--', command, ...args], { timeout: 90_000 });
}


