// rsync daemon on 127.0.0.1:8873 for the rsync storage tests (test-servers.md section 5): module `backup` with user
// `rsyncuser`, plus Debian's rsync binary, which the SSH-mode tests also need on the sshd side (same machine).
// Idempotent: a running instance (its state file present) is reused. Usable three ways: `ensureRsyncd()` from
// ensure.mjs, as a vitest globalSetup (default export), or `node rsyncd.mjs`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const RSYNCD_HOST = '127.0.0.1';
export const RSYNCD_PORT = 8873;
export const RSYNCD_STATE_DIR = '/tmp/holdfast-test-services/rsyncd';
/** JSON file tests read: host, port, module, user, password, dataDir, url. */
export const RSYNCD_STATE_FILE = join(RSYNCD_STATE_DIR, 'rsyncd.json');

const MODULE = 'backup';
const USER = 'rsyncuser';
const PASSWORD = 'rsync-pass';
const DATA_DIR = join(RSYNCD_STATE_DIR, 'data');

/** The daemon is ready when it lists its modules (a bare TCP connect is not enough). */
function listsModules() {
  const result = spawnSync('rsync', ['--contimeout=2', `rsync://${RSYNCD_HOST}:${RSYNCD_PORT}/`], { encoding: 'utf8', timeout: 5000 });
  return result.status === 0 && result.stdout.includes(MODULE);
}

function aptInstall(packages) {
  // Several launchers may install at once; apt's own lock fails instead of waiting, so serialise on one flock.
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    spawnSync('flock', ['/tmp/holdfast-apt.lock', 'apt-get', 'install', '-y', '--no-install-recommends', ...packages], { env, encoding: 'utf8' });
  let result = install();
  if (result.status !== 0) {
    spawnSync('flock', ['/tmp/holdfast-apt.lock', 'apt-get', 'update'], { env, stdio: 'ignore' });
    result = install();
  }
  return result;
}

function ensureInstalled() {
  if (existsSync('/usr/bin/rsync')) return;
  const result = aptInstall(['rsync']);
  if (result.status !== 0 || !existsSync('/usr/bin/rsync')) {
    throw new Error(`cannot install rsync (needed for the rsync tests): ${result.stderr?.slice(-500) ?? 'apt-get failed'}`);
  }
}

function writeFiles() {
  mkdirSync(DATA_DIR, { recursive: true });
  const secrets = join(RSYNCD_STATE_DIR, 'rsyncd.secrets');
  // rsyncd refuses a secrets file others can read.
  writeFileSync(secrets, `${USER}:${PASSWORD}\n`, { mode: 0o600 });
  const config = join(RSYNCD_STATE_DIR, 'rsyncd.conf');
  writeFileSync(
    config,
    [
      `address = ${RSYNCD_HOST}`,
      `port = ${RSYNCD_PORT}`,
      `pid file = ${join(RSYNCD_STATE_DIR, 'rsyncd.pid')}`,
      `log file = ${join(RSYNCD_STATE_DIR, 'rsyncd.log')}`,
      'use chroot = no',
      // Without uid/gid a root-run daemon drops to nobody and cannot write the data folder.
      'uid = root',
      'gid = root',
      'max connections = 64',
      `[${MODULE}]`,
      `  path = ${DATA_DIR}`,
      '  read only = no',
      `  auth users = ${USER}`,
      `  secrets file = ${secrets}`,
      `  hosts allow = ${RSYNCD_HOST}`,
      '',
    ].join('\n'),
  );
  return config;
}

/** Starts the rsync daemon when it is not answering yet; resolves `'already running'` or `'started'`. */
export async function ensureRsyncd() {
  ensureInstalled();
  if (listsModules() && existsSync(RSYNCD_STATE_FILE)) return 'already running';
  if (listsModules()) throw new Error(`something else answers rsync on ${RSYNCD_HOST}:${RSYNCD_PORT} (no ${RSYNCD_STATE_FILE})`);
  const config = writeFiles();
  rmSync(join(RSYNCD_STATE_DIR, 'rsyncd.pid'), { force: true });
  rmSync(RSYNCD_STATE_FILE, { force: true });
  // Without --no-detach the daemon forks into the background (writes its pid file) and outlives this process.
  // stdin must not be a socket: rsync would take it for an inetd connection (Node's stdio pipes are socketpairs).
  const start = spawnSync('rsync', ['--daemon', `--config=${config}`], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  if (start.status !== 0) throw new Error(`rsync --daemon did not start: ${start.stderr.slice(-500)}`);
  // After a stop the port can stay busy for about a second; wait up to 10 s.
  for (let i = 0; i < 100 && !listsModules(); i++) await new Promise((r) => setTimeout(r, 100));
  if (!listsModules()) throw new Error(`the rsync daemon did not answer on ${RSYNCD_HOST}:${RSYNCD_PORT} within 10 s (see ${RSYNCD_STATE_DIR}/rsyncd.log)`);
  const state = {
    host: RSYNCD_HOST,
    port: RSYNCD_PORT,
    module: MODULE,
    user: USER,
    password: PASSWORD,
    dataDir: DATA_DIR,
    url: `rsync://${USER}@${RSYNCD_HOST}:${RSYNCD_PORT}/${MODULE}`,
  };
  writeFileSync(RSYNCD_STATE_FILE, `${JSON.stringify(state, null, 2)}\n`);
  return 'started';
}

/** vitest globalSetup entry: the rsync tests start the daemon themselves. */
export default async function setup() {
  await ensureRsyncd();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureRsyncd().then(
    (state) => process.stdout.write(`rsync daemon ${state} on ${RSYNCD_HOST}:${RSYNCD_PORT}\n`),
    (error) => {
      process.stderr.write(`rsyncd: ${error.message}\n`);
      process.exit(1);
    },
  );
}
