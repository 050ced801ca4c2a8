// MariaDB on 127.0.0.1:3306 (root, empty password) for the MySQL source tests, plus the client tools they drive
// (`mariadb-dump`, `mariadb`). The CI machine runs MariaDB already; a stopped one is started with the machine's own
// command. Idempotent. Usable as `ensureMariadb()` from ensure.mjs, as a vitest globalSetup, or `node mariadb.mjs`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const MARIADB_HOST = '127.0.0.1';
export const MARIADB_PORT = 3306;
export const MARIADB_STATE_DIR = '/tmp/holdfast-test-services/mariadb';
/** JSON file tests read: host, port, user, password, version. */
export const MARIADB_STATE_FILE = join(MARIADB_STATE_DIR, 'mariadb.json');

/** Installs apt packages under the shared apt lock (several launchers may install at once). */
export function aptInstall(packages) {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    spawnSync('flock', ['/tmp/holdfast-apt.lock', 'apt-get', 'install', '-y', '--no-install-recommends', ...packages], { env, encoding: 'utf8' });
  let result = install();
  if (result.status !== 0) {
    // Stale package lists make the install fail; refresh them once.
    spawnSync('flock', ['/tmp/holdfast-apt.lock', 'apt-get', 'update'], { env, stdio: 'ignore' });
    result = install();
  }
  if (result.status !== 0) throw new Error(`cannot install ${packages.join(' ')}: ${result.stderr?.slice(-500) ?? 'apt-get failed'}`);
}

function query(sql) {
  return spawnSync('mariadb', ['--host', MARIADB_HOST, '--port', String(MARIADB_PORT), '--user', 'root', '--batch', '--skip-column-names', '-e', sql], {
    encoding: 'utf8',
    timeout: 5000,
  });
}

/** Real readiness: a query answers, not merely an open port. */
function answers() {
  return query('SELECT VERSION()').status === 0;
}

/** Makes sure the client tools exist and the server answers; resolves `'already running'` or `'started'`. */
export async function ensureMariadb() {
  if (!existsSync('/usr/bin/mariadb-dump') || !existsSync('/usr/bin/mariadb')) aptInstall(['mariadb-client']);
  let state = 'already running';
  if (!answers()) {
    if (!existsSync('/usr/sbin/mariadbd')) throw new Error('MariaDB is not installed (/usr/sbin/mariadbd missing); the tests need the local MariaDB 10.11 on 127.0.0.1:3306');
    spawnSync('start-stop-daemon', ['--start', '--oknodo', '--background', '--exec', '/usr/sbin/mariadbd'], { stdio: 'ignore' });
    for (let i = 0; i < 300 && !answers(); i++) await new Promise((r) => setTimeout(r, 100));
    if (!answers()) throw new Error(`MariaDB did not answer on ${MARIADB_HOST}:${MARIADB_PORT} as root within 30 s`);
    state = 'started';
  }
  mkdirSync(MARIADB_STATE_DIR, { recursive: true });
  const version = query('SELECT VERSION()').stdout.trim();
  writeFileSync(MARIADB_STATE_FILE, `${JSON.stringify({ host: MARIADB_HOST, port: MARIADB_PORT, user: 'root', password: '', version }, null, 2)}\n`);
  return state;
}

/** vitest globalSetup entry. */
export default async function setup() {
  await ensureMariadb();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureMariadb().then(
    (state) => process.stdout.write(`mariadb ${state} on ${MARIADB_HOST}:${MARIADB_PORT}\n`),
    (error) => {
      process.stderr.write(`mariadb: ${error.message}\n`);
      process.exit(1);
    },
  );
}
