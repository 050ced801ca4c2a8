// A second PostgreSQL 15 cluster on 127.0.0.1:5433 for the point-in-time recovery tests (issue 43): wal_level=replica,
// WAL senders and replication slots enabled, password (scram-sha-256) auth over TCP, and three login roles whose
// difference is exactly what the replication check must tell apart:
//   holdfast_repl        REPLICATION, and pg_hba.conf has its `host replication` line   -> may stream WAL
//   holdfast_norepl      no REPLICATION attribute, no replication line                  -> privilege missing
//   holdfast_repl_nohba  REPLICATION, but no replication line in pg_hba.conf            -> pg_hba.conf line missing
// The machine's own cluster (5432, trust auth, no replication lines) is left alone: its settings are shared by every
// suite. This one lives in its own data directory below the test-services state folder, is created once, and is
// reused while it runs (a second call costs one psql round trip). Usable as `ensurePostgresPitr()` from ensure.mjs, as
// a vitest globalSetup (default export), or `node postgres-pitr.mjs`; `stopPostgresPitr()` is called by stop.mjs.
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PG_PITR_HOST = '127.0.0.1';
/** Fixed, next to the machine's 5432; checked free before the first start. */
export const PG_PITR_PORT = 5433;
export const PG_PITR_STATE_DIR = '/tmp/holdfast-test-services/postgres-pitr';
/** JSON file tests read: host, port, version, walLevel, roles { repl, norepl, replNoHba } with user and password. */
export const PG_PITR_STATE_FILE = join(PG_PITR_STATE_DIR, 'postgres-pitr.json');

const BIN = '/usr/lib/postgresql/15/bin';
const DATA_DIR = join(PG_PITR_STATE_DIR, 'data');
/** The Unix socket lives in the state folder, so the launcher administers the cluster without a TCP password. */
const SOCKET_DIR = PG_PITR_STATE_DIR;
const LOG_FILE = join(PG_PITR_STATE_DIR, 'postgres.log');
/** initdb and postgres refuse to run as root; as root the cluster belongs to Debian's `postgres` user. */
const OS_USER = 'postgres';

export const PG_PITR_ROLES = {
  repl: { user: 'holdfast_repl', password: 'holdfast-repl-pass', replication: true },
  norepl: { user: 'holdfast_norepl', password: 'holdfast-norepl-pass', replication: false },
  replNoHba: { user: 'holdfast_repl_nohba', password: 'holdfast-repl-nohba-pass', replication: true },
};

// Why each setting: physical base backups and WAL streaming need wal_level replica (logical also works), a WAL sender
// per stream plus one for pg_basebackup, and a slot per stream so the server keeps WAL the archive has not received.
const SETTINGS = `# Written by tooling/test-services/postgres-pitr.mjs (included from postgresql.conf)
listen_addresses = '${PG_PITR_HOST}'
port = ${PG_PITR_PORT}
unix_socket_directories = '${SOCKET_DIR}'
wal_level = replica
max_wal_senders = 10
max_replication_slots = 10
# A forgotten slot must not fill the test machine's disk.
max_slot_wal_keep_size = '1GB'
shared_buffers = '32MB'
fsync = off
synchronous_commit = off
log_connections = off
`;

const HBA = `# Written by tooling/test-services/postgres-pitr.mjs
# The launcher administers over the Unix socket in its own state folder.
local all all trust
# The one replication line: holdfast_repl may open replication connections, the other roles may not.
host replication ${PG_PITR_ROLES.repl.user} ${PG_PITR_HOST}/32 scram-sha-256
host all all ${PG_PITR_HOST}/32 scram-sha-256
`;

function asOwner(command, args) {
  const isRoot = process.getuid?.() === 0;
  const [file, argv] = isRoot ? ['runuser', ['-u', OS_USER, '--', command, ...args]] : [command, args];
  return spawnSync(file, argv, { encoding: 'utf8', timeout: 60_000 });
}

function psql(sql) {
  return spawnSync('psql', ['-h', SOCKET_DIR, '-p', String(PG_PITR_PORT), '-U', 'postgres', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-Atc', sql], {
    encoding: 'utf8',
    timeout: 10_000,
  });
}

/** Real readiness: a query answers over the socket, not merely an open port. */
function answers() {
  return psql('select 1').stdout?.trim() === '1';
}

function portTaken() {
  const result = spawnSync('ss', ['-Hltn', `sport = :${PG_PITR_PORT}`], { encoding: 'utf8' });
  return result.status === 0 && result.stdout.trim() !== '';
}

/**
 * initdb into a private folder, then one rename: when two launchers race (ensure.mjs and a package's globalSetup),
 * one rename wins and the other's cluster is thrown away, never half-initialised. True when this call's cluster won.
 */
function initCluster() {
  if (!existsSync(join(BIN, 'initdb'))) throw new Error(`${BIN}/initdb is missing: apt-get install postgresql-15`);
  const fresh = `${DATA_DIR}.init-${process.pid}`;
  rmSync(fresh, { recursive: true, force: true });
  mkdirSync(fresh, { recursive: true });
  if (process.getuid?.() === 0) {
    const { uid, gid } = userIds(OS_USER);
    chownSync(PG_PITR_STATE_DIR, uid, gid);
    chownSync(fresh, uid, gid);
  }
  const init = asOwner(join(BIN, 'initdb'), ['-D', fresh, '-U', 'postgres', '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
  if (init.status !== 0) {
    rmSync(fresh, { recursive: true, force: true });
    throw new Error(`initdb failed: ${(init.stderr || init.stdout).trim().split('\n').slice(-2).join(' ')}`);
  }
  const conf = join(fresh, 'postgresql.conf');
  writeFileSync(conf, `${readFileSync(conf, 'utf8')}\ninclude 'holdfast-pitr.conf'\n`);
  try {
    renameSync(fresh, DATA_DIR);
    return true;
  } catch {
    rmSync(fresh, { recursive: true, force: true }); // another launcher's cluster is in place
    return false;
  }
}

/** Waits for a cluster another launcher is starting. */
async function answersWithin(seconds) {
  for (let i = 0; i < seconds * 10; i++) {
    if (answers()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

function userIds(name) {
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((entry) => entry.startsWith(`${name}:`));
  if (!line) throw new Error(`the OS user ${name} does not exist (Debian's postgresql package creates it)`);
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** Writes the settings and pg_hba.conf; returns true when a file changed (a running server must reload). */
function writeConfig() {
  let changed = false;
  for (const [file, text] of [
    [join(DATA_DIR, 'holdfast-pitr.conf'), SETTINGS],
    [join(DATA_DIR, 'pg_hba.conf'), HBA],
  ]) {
    if (existsSync(file) && readFileSync(file, 'utf8') === text) continue;
    writeFileSync(file, text);
    if (process.getuid?.() === 0) {
      const { uid, gid } = userIds(OS_USER);
      chownSync(file, uid, gid);
    }
    changed = true;
  }
  return changed;
}

/** Creates the roles when missing and (re)sets their passwords and attributes: cheap, one round trip. */
function ensureRoles() {
  const statements = Object.values(PG_PITR_ROLES).map(({ user, password, replication }) => {
    const attributes = `LOGIN ${replication ? 'REPLICATION' : 'NOREPLICATION'} PASSWORD '${password}'`;
    return `DO $$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${user}') THEN CREATE ROLE ${user} ${attributes};
      ELSE ALTER ROLE ${user} ${attributes}; END IF; END $$;`;
  });
  // One psql -c string is one transaction: the advisory lock serialises launchers racing to create the same roles.
  const result = psql(['SELECT pg_advisory_xact_lock(43043);', ...statements].join('\n'));
  if (result.status !== 0) throw new Error(`cannot create the test roles: ${result.stderr.trim()}`);
}

/** Makes sure the cluster runs with its settings and roles; resolves `'already running'` or `'started (… ms)'`. */
export async function ensurePostgresPitr() {
  mkdirSync(PG_PITR_STATE_DIR, { recursive: true });
  let state = 'already running';
  if (answers()) {
    if (writeConfig()) {
      asOwner(join(BIN, 'pg_ctl'), ['-D', DATA_DIR, 'reload']);
      state = 'already running, configuration reloaded';
    }
  } else {
    if (portTaken() && !(await answersWithin(15))) {
      throw new Error(`port ${PG_PITR_PORT} is taken by another program (ss -ltnp 'sport = :${PG_PITR_PORT}'); the PITR test cluster needs it`);
    }
    const created = !existsSync(join(DATA_DIR, 'PG_VERSION')) && initCluster();
    writeConfig();
    const start = answers() ? { status: 0 } : asOwner(join(BIN, 'pg_ctl'), ['-D', DATA_DIR, '-l', LOG_FILE, '-w', '-t', '30', 'start']);
    // A failed start may be a race lost to another launcher starting the same cluster: give it time to answer.
    if (!answers() && (start.status === 0 || !(await answersWithin(15)))) {
      const tail = existsSync(LOG_FILE) ? readFileSync(LOG_FILE, 'utf8').trim().split('\n').slice(-3).join(' | ') : '';
      throw new Error(`the PITR cluster did not start on ${PG_PITR_HOST}:${PG_PITR_PORT}: ${(start.stderr || start.stdout).trim()} ${tail}`);
    }
    state = created ? 'created and started' : 'started';
  }
  ensureRoles();
  const [version, walLevel] = psql("select current_setting('server_version'), current_setting('wal_level')").stdout.trim().split('|');
  const roles = Object.fromEntries(Object.entries(PG_PITR_ROLES).map(([key, { user, password }]) => [key, { user, password }]));
  writeFileSync(PG_PITR_STATE_FILE, `${JSON.stringify({ host: PG_PITR_HOST, port: PG_PITR_PORT, version, walLevel, roles }, null, 2)}\n`);
  return state;
}

/** Stops the cluster (fast mode: open sessions are ended) when its data directory exists; the data stays. */
export function stopPostgresPitr() {
  if (!existsSync(join(DATA_DIR, 'postmaster.pid'))) return 'not running';
  const stop = asOwner(join(BIN, 'pg_ctl'), ['-D', DATA_DIR, '-m', 'fast', '-w', 'stop']);
  return stop.status === 0 ? 'stopped' : `stop failed: ${(stop.stderr || stop.stdout).trim()}`;
}

/** vitest globalSetup entry. */
export default async function setup() {
  await ensurePostgresPitr();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const started = Date.now();
  ensurePostgresPitr().then(
    (state) => process.stdout.write(`postgres-pitr ${state} on ${PG_PITR_HOST}:${PG_PITR_PORT} (${Date.now() - started} ms)\n`),
    (error) => {
      process.stderr.write(`postgres-pitr: ${error.message}\n`);
      process.exit(1);
    },
  );
}

