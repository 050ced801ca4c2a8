// A second MariaDB on 127.0.0.1:3307 for the MySQL/MariaDB point-in-time recovery tests (issue 44): binary logging
// on (`log_bin`), `server_id=1`, `binlog_format=ROW`, `binlog_row_image=FULL`, and accounts whose difference is exactly
// what the binary-log check must tell apart:
//   holdfast_binlog    REPLICATION SLAVE + REPLICATION CLIENT and what a dump and mariadb-backup need -> may stream
//   holdfast_noslave   REPLICATION CLIENT only (no REPLICATION SLAVE)                                -> cannot stream
//   holdfast_norepl    dump privileges only, no replication privilege at all                          -> both missing
//   holdfast_admin     ALL PRIVILEGES (the tests' own FLUSH/PURGE BINARY LOGS and SET GLOBAL)
// The machine's own MariaDB (3306, binary logging off) is left alone: every other suite shares it. This one lives in
// its own data directory below the test-services state folder, is created once (mariadb-install-db), and is reused
// while it runs (a second call costs one client round trip). It also installs `mariadb-backup` from Debian's packages.
// Usable as `ensureMariadbPitr()` from ensure.mjs, as a vitest globalSetup (default export), or
// `node mariadb-pitr.mjs`; `stopMariadbPitr()` is called by stop.mjs.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { aptInstall } from './mariadb.mjs';

export const MARIADB_PITR_HOST = '127.0.0.1';
/** Fixed, next to the machine's 3306; checked free before the first start. */
export const MARIADB_PITR_PORT = 3307;
export const MARIADB_PITR_STATE_DIR = '/tmp/holdfast-test-services/mariadb-pitr';
/** JSON file tests read: host, port, socket, version, dataDir, users { admin, binlog, noSlave, noRepl }. */
export const MARIADB_PITR_STATE_FILE = join(MARIADB_PITR_STATE_DIR, 'mariadb-pitr.json');

const DATA_DIR = join(MARIADB_PITR_STATE_DIR, 'data');
const SOCKET = join(MARIADB_PITR_STATE_DIR, 'mysqld.sock');
const PID_FILE = join(MARIADB_PITR_STATE_DIR, 'mariadbd.pid');
const LOG_FILE = join(MARIADB_PITR_STATE_DIR, 'error.log');
const CONFIG_FILE = join(MARIADB_PITR_STATE_DIR, 'my.cnf');
const isRoot = process.getuid?.() === 0;
/** mariadbd refuses to run as root unless told to; as root it runs as Debian's `mysql` user, else as the caller. */
const OS_USER = isRoot ? 'mysql' : userInfo().username;

export const MARIADB_PITR_USERS = {
  admin: { user: 'holdfast_admin', password: 'holdfast-admin-pass', grants: 'ALL PRIVILEGES ON *.* TO {u} WITH GRANT OPTION' },
  // What streaming needs (REPLICATION SLAVE: the binlog dump; REPLICATION CLIENT, called BINLOG MONITOR since 10.5:
  // SHOW BINARY LOGS / SHOW MASTER STATUS), a consistent dump with coordinates (SELECT ... RELOAD), and mariadb-backup
  // (RELOAD, PROCESS, LOCK TABLES, BINLOG MONITOR, SLAVE MONITOR).
  binlog: {
    user: 'holdfast_binlog',
    password: 'holdfast-binlog-pass',
    grants: 'REPLICATION SLAVE, REPLICATION CLIENT, SLAVE MONITOR, SELECT, SHOW VIEW, TRIGGER, EVENT, LOCK TABLES, RELOAD, PROCESS ON *.* TO {u}',
  },
  noSlave: { user: 'holdfast_noslave', password: 'holdfast-noslave-pass', grants: 'REPLICATION CLIENT, SELECT, SHOW VIEW, TRIGGER, EVENT, LOCK TABLES ON *.* TO {u}' },
  noRepl: { user: 'holdfast_norepl', password: 'holdfast-norepl-pass', grants: 'SELECT, SHOW VIEW, TRIGGER, EVENT, LOCK TABLES ON *.* TO {u}' },
};

// Why each setting: binary logging with a server id is what a replica (and mariadb-binlog) reads; ROW with FULL
// images replays exactly. fsync-free settings: test data only.
const CONFIG = `# Written by tooling/test-services/mariadb-pitr.mjs (read with --defaults-file: /etc/mysql is not read)
[mysqld]
user = ${OS_USER}
datadir = ${DATA_DIR}
socket = ${SOCKET}
pid-file = ${PID_FILE}
log-error = ${LOG_FILE}
port = ${MARIADB_PITR_PORT}
bind-address = ${MARIADB_PITR_HOST}
skip-name-resolve
log_bin = mysql-bin
server_id = 1
binlog_format = ROW
binlog_row_image = FULL
expire_logs_days = 0
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
innodb_buffer_pool_size = 64M
innodb_log_file_size = 48M
innodb_flush_log_at_trx_commit = 2
sync_binlog = 0
performance_schema = OFF
`;

/** Runs SQL as the server's root over its socket (unix_socket authentication of the OS user). */
function client(sql, timeout = 10_000) {
  return spawnSync('mariadb', ['--no-defaults', `--socket=${SOCKET}`, '--user=root', '--batch', '--skip-column-names', '-e', sql], { encoding: 'utf8', timeout });
}

/** Real readiness: a query answers, not merely an open socket. */
function answers() {
  return client('SELECT 1').stdout?.trim() === '1';
}

async function answersWithin(seconds) {
  for (let i = 0; i < seconds * 10; i++) {
    if (answers()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

function portTaken() {
  const result = spawnSync('ss', ['-Hltn', `sport = :${MARIADB_PITR_PORT}`], { encoding: 'utf8' });
  return result.status === 0 && result.stdout.trim() !== '';
}

function userIds(name) {
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((entry) => entry.startsWith(`${name}:`));
  if (!line) throw new Error(`the OS user ${name} does not exist (Debian's mariadb-server package creates it)`);
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function chownToServer(path) {
  if (!isRoot) return;
  const { uid, gid } = userIds(OS_USER);
  chownSync(path, uid, gid);
}

/** The tools: mariadb-binlog (client package) streams, mariadb-backup takes physical base backups. */
function ensureTools() {
  const missing = [];
  if (!existsSync('/usr/bin/mariadb-binlog') || !existsSync('/usr/bin/mariadb')) missing.push('mariadb-client');
  if (!existsSync('/usr/bin/mariadb-backup')) missing.push('mariadb-backup');
  if (missing.length > 0) aptInstall(missing);
}

/**
 * mariadb-install-db into a private folder, then one rename: when two launchers race (ensure.mjs and a package's
 * globalSetup), one rename wins and the other's data directory is thrown away, never half-initialised.
 */
function initDataDir() {
  if (!existsSync('/usr/bin/mariadb-install-db')) throw new Error('mariadb-install-db is missing: apt-get install mariadb-server');
  const fresh = `${DATA_DIR}.init-${process.pid}`;
  rmSync(fresh, { recursive: true, force: true });
  mkdirSync(fresh, { recursive: true });
  chownToServer(fresh);
  const init = spawnSync(
    'mariadb-install-db',
    [
      '--no-defaults',
      `--user=${OS_USER}`,
      `--datadir=${fresh}`,
      '--auth-root-authentication-method=socket',
      `--auth-root-socket-user=${isRoot ? 'root' : OS_USER}`,
      '--skip-test-db',
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  if (init.status !== 0) {
    rmSync(fresh, { recursive: true, force: true });
    throw new Error(`mariadb-install-db failed: ${(init.stderr || init.stdout).trim().split('\n').slice(-2).join(' ')}`);
  }
  try {
    renameSync(fresh, DATA_DIR);
    return true;
  } catch {
    rmSync(fresh, { recursive: true, force: true }); // another launcher's data directory is in place
    return false;
  }
}

/** Starts mariadbd in the background (its own session, output to the error log) and does not wait for it. */
function startServer() {
  const out = openSync(join(MARIADB_PITR_STATE_DIR, 'mariadbd.out'), 'a');
  const child = spawn('/usr/sbin/mariadbd', [`--defaults-file=${CONFIG_FILE}`], { detached: true, stdio: ['ignore', out, out] });
  child.unref();
}

/** Creates the accounts when missing, resets their passwords and grants, and puts the global settings back. */
function ensureUsersAndSettings() {
  const statements = ['SET GLOBAL server_id = 1', "SET GLOBAL binlog_format = 'ROW'", "SET GLOBAL binlog_row_image = 'FULL'"];
  for (const { user, password, grants } of Object.values(MARIADB_PITR_USERS)) {
    const account = `'${user}'@'%'`;
    statements.push(
      `CREATE USER IF NOT EXISTS ${account} IDENTIFIED BY '${password}'`,
      `ALTER USER ${account} IDENTIFIED BY '${password}'`,
      `REVOKE ALL PRIVILEGES, GRANT OPTION FROM ${account}`,
      `GRANT ${grants.replace('{u}', account)}`,
    );
  }
  const result = client(`${statements.join(';\n')};`);
  if (result.status !== 0) throw new Error(`cannot set up the test accounts: ${result.stderr.trim()}`);
}

/** Makes sure the server runs with its settings and accounts; resolves `'already running'`, `'started'`, ... */
export async function ensureMariadbPitr() {
  ensureTools();
  mkdirSync(MARIADB_PITR_STATE_DIR, { recursive: true });
  chownToServer(MARIADB_PITR_STATE_DIR);
  let state = 'already running';
  if (!answers()) {
    if (portTaken() && !(await answersWithin(15))) {
      throw new Error(`port ${MARIADB_PITR_PORT} is taken by another program (ss -ltnp 'sport = :${MARIADB_PITR_PORT}'); the MariaDB PITR test server needs it`);
    }
    const created = !existsSync(join(DATA_DIR, 'mysql')) && initDataDir();
    if (!existsSync(CONFIG_FILE) || readFileSync(CONFIG_FILE, 'utf8') !== CONFIG) writeFileSync(CONFIG_FILE, CONFIG);
    // A second launcher racing this one may start it too: the loser's mariadbd fails on the data directory's lock.
    if (!answers()) startServer();
    if (!(await answersWithin(60))) {
      const tail = existsSync(LOG_FILE) ? readFileSync(LOG_FILE, 'utf8').trim().split('\n').slice(-3).join(' | ') : '';
      throw new Error(`the MariaDB PITR server did not start on ${MARIADB_PITR_HOST}:${MARIADB_PITR_PORT} within 60 s: ${tail}`);
    }
    state = created ? 'created and started' : 'started';
  } else if (!existsSync(CONFIG_FILE) || readFileSync(CONFIG_FILE, 'utf8') !== CONFIG) {
    writeFileSync(CONFIG_FILE, CONFIG);
    state = 'already running (configuration rewritten: takes effect at the next start)';
  }
  ensureUsersAndSettings();
  const [version, logBin, serverId, format] = client('SELECT VERSION(), @@log_bin, @@server_id, @@binlog_format').stdout.trim().split('\t');
  const users = Object.fromEntries(Object.entries(MARIADB_PITR_USERS).map(([key, { user, password }]) => [key, { user, password }]));
  const described = { host: MARIADB_PITR_HOST, port: MARIADB_PITR_PORT, socket: SOCKET, dataDir: DATA_DIR, version, logBin: logBin === '1', serverId: Number(serverId), binlogFormat: format, users };
  writeFileSync(MARIADB_PITR_STATE_FILE, `${JSON.stringify(described, null, 2)}\n`);
  return state;
}

/** Shuts the server down cleanly (its data directory stays for the next start). */
export function stopMariadbPitr() {
  if (!existsSync(PID_FILE)) return 'not running';
  const stop = spawnSync('mariadb-admin', ['--no-defaults', `--socket=${SOCKET}`, '--user=root', 'shutdown'], { encoding: 'utf8', timeout: 60_000 });
  return stop.status === 0 ? 'stopped' : `stop failed: ${(stop.stderr || stop.stdout).trim()}`;
}

/** vitest globalSetup entry. */
export default async function setup() {
  await ensureMariadbPitr();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const started = Date.now();
  ensureMariadbPitr().then(
    (state) => process.stdout.write(`mariadb-pitr ${state} on ${MARIADB_PITR_HOST}:${MARIADB_PITR_PORT} (${Date.now() - started} ms)\n`),
    (error) => {
      process.stderr.write(`mariadb-pitr: ${error.message}\n`);
      process.exit(1);
    },
  );
}
