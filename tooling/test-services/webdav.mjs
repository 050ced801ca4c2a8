// Apache 2.4 mod_dav_fs on 127.0.0.1:8081 for the WebDAV storage tests: one data folder served twice, at /dav with
// basic auth and at /dav-digest with digest auth (user `davuser`). Idempotent: a running instance (its state file
// present) is reused. Usable three ways: `ensureWebdav()` from ensure.mjs, as a vitest globalSetup (default export),
// or `node webdav.mjs`.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const WEBDAV_HOST = '127.0.0.1';
export const WEBDAV_PORT = 8081;
export const WEBDAV_STATE_DIR = '/tmp/holdfast-test-services/webdav';
/** JSON file tests read: host, port, basicUrl, digestUrl, user, password, dataDir, owner. */
export const WEBDAV_STATE_FILE = join(WEBDAV_STATE_DIR, 'webdav.json');

const USER = 'davuser';
const PASSWORD = 'davuser-pass';
const REALM = 'holdfast-webdav';
const MODULES = '/usr/lib/apache2/modules';
const DATA_DIR = join(WEBDAV_STATE_DIR, 'data');
const BASE = `http://${WEBDAV_HOST}:${WEBDAV_PORT}`;
const STATE_DIR_FOR_LOCK = WEBDAV_STATE_DIR;

/** Serialises starts across processes (two test runs may start at once): a lock directory, stale after 2 minutes. */
async function withStartLock(work) {
  mkdirSync(STATE_DIR_FOR_LOCK, { recursive: true });
  const lock = join(STATE_DIR_FOR_LOCK, 'start.lock');
  for (let attempt = 0; ; attempt++) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      if (Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 120_000) rmSync(lock, { recursive: true, force: true });
      if (attempt > 1800) throw new Error(`gave up waiting for ${lock} after 3 minutes`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** True when the PID in `pidFile` is alive: the server answering is the one this launcher started earlier. */
function isOwnInstance(pidFile) {
  try {
    process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 0);
    return true;
  } catch {
    return false;
  }
}

/** The server is ready when an unauthenticated PROPFIND gets Apache's 401 (a bare TCP connect is not enough). */
async function answers401(path = '/dav/') {
  try {
    const response = await fetch(`${BASE}${path}`, { method: 'PROPFIND', headers: { Depth: '0' }, signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.status === 401;
  } catch {
    return false;
  }
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
  if (existsSync('/usr/sbin/apache2') && existsSync(join(MODULES, 'mod_dav_fs.so')) && existsSync(join(MODULES, 'mod_auth_digest.so'))) return;
  const result = aptInstall(['apache2']);
  if (result.status !== 0 || !existsSync('/usr/sbin/apache2')) {
    throw new Error(`cannot install apache2 (needed for the WebDAV tests): ${result.stderr?.slice(-500) ?? 'apt-get failed'}`);
  }
}

function writeFiles() {
  for (const dir of ['data', 'lock', 'logs']) mkdirSync(join(WEBDAV_STATE_DIR, dir), { recursive: true });
  execFileSync('chown', ['www-data:www-data', DATA_DIR, join(WEBDAV_STATE_DIR, 'lock')]);
  // Written by hand instead of htpasswd/htdigest: {SHA} for basic, and MD5(user:realm:password) as htdigest stores it.
  const sha1 = createHash('sha1').update(PASSWORD).digest('base64');
  writeFileSync(join(WEBDAV_STATE_DIR, 'htpasswd'), `${USER}:{SHA}${sha1}\n`);
  const ha1 = createHash('md5').update(`${USER}:${REALM}:${PASSWORD}`).digest('hex');
  writeFileSync(join(WEBDAV_STATE_DIR, 'htdigest'), `${USER}:${REALM}:${ha1}\n`);
  const modules = [
    'mpm_event', 'authn_core', 'authn_file', 'authz_core', 'authz_user', 'auth_basic', 'auth_digest', 'alias', 'dav', 'dav_fs',
  ];
  const config = join(WEBDAV_STATE_DIR, 'httpd.conf');
  writeFileSync(
    config,
    [
      `ServerRoot "${WEBDAV_STATE_DIR}"`,
      `ServerName ${WEBDAV_HOST}`,
      `Listen ${WEBDAV_HOST}:${WEBDAV_PORT}`,
      `PidFile ${join(WEBDAV_STATE_DIR, 'httpd.pid')}`,
      `ErrorLog ${join(WEBDAV_STATE_DIR, 'logs', 'error.log')}`,
      ...modules.map((name) => `LoadModule ${name}_module ${MODULES}/mod_${name}.so`),
      'User www-data',
      'Group www-data',
      // The conformance suite puts 8 objects at once and the listing check 8 more; keep enough workers around.
      'MaxRequestWorkers 64',
      'ThreadsPerChild 16',
      `DavLockDB ${join(WEBDAV_STATE_DIR, 'lock', 'DavLock')}`,
      `Alias /dav-digest ${DATA_DIR}`,
      `Alias /dav ${DATA_DIR}`,
      `<Directory "${DATA_DIR}">`,
      '  Dav On',
      '</Directory>',
      '<Location /dav>',
      '  AuthType Basic',
      '  AuthName "webdav"',
      `  AuthUserFile ${join(WEBDAV_STATE_DIR, 'htpasswd')}`,
      '  Require valid-user',
      '</Location>',
      '<Location /dav-digest>',
      '  AuthType Digest',
      `  AuthName "${REALM}"`,
      '  AuthDigestProvider file',
      `  AuthUserFile ${join(WEBDAV_STATE_DIR, 'htdigest')}`,
      '  Require valid-user',
      '</Location>',
      '',
    ].join('\n'),
  );
  return config;
}

function writeState() {
  const state = {
    host: WEBDAV_HOST,
    port: WEBDAV_PORT,
    basicUrl: `${BASE}/dav`,
    digestUrl: `${BASE}/dav-digest`,
    user: USER,
    password: PASSWORD,
    dataDir: DATA_DIR,
    owner: 'www-data',
  };
  writeFileSync(WEBDAV_STATE_FILE, `${JSON.stringify(state, null, 2)}\n`);
}

/** Starts Apache when it is not answering yet; resolves `'already running'` or `'started'`. */
export async function ensureWebdav() {
  if ((await answers401()) && existsSync(WEBDAV_STATE_FILE)) return 'already running';
  return withStartLock(async () => {
    if (await answers401()) {
      if (existsSync(WEBDAV_STATE_FILE)) return 'already running';
      if (!isOwnInstance(join(WEBDAV_STATE_DIR, 'httpd.pid'))) {
        throw new Error(`something else answers HTTP on ${WEBDAV_HOST}:${WEBDAV_PORT} (no ${WEBDAV_STATE_FILE})`);
      }
      writeState();
      return 'already running';
    }
    ensureInstalled();
    const config = writeFiles();
    execFileSync('/usr/sbin/apache2', ['-f', config, '-t'], { stdio: ['ignore', 'ignore', 'pipe'] });
    rmSync(WEBDAV_STATE_FILE, { force: true });
    // Without -DFOREGROUND Apache daemonises (writes its PidFile) and outlives the process that started it.
    const start = spawnSync('/usr/sbin/apache2', ['-f', config], { encoding: 'utf8' });
    if (start.status !== 0) throw new Error(`apache2 did not start: ${start.stderr.slice(-500)}`);
    for (let i = 0; i < 100 && !(await answers401()); i++) await new Promise((r) => setTimeout(r, 100));
    if (!(await answers401()) || !(await answers401('/dav-digest/'))) {
      throw new Error(`Apache WebDAV did not answer on ${BASE} within 10 s (see ${WEBDAV_STATE_DIR}/logs/error.log)`);
    }
    writeState();
    return 'started';
  });
}

/** vitest globalSetup entry: the WebDAV tests start the server themselves. */
export default async function setup() {
  await ensureWebdav();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureWebdav().then(
    (state) => process.stdout.write(`Apache WebDAV ${state} on ${BASE}\n`),
    (error) => {
      process.stderr.write(`webdav: ${error.message}\n`);
      process.exit(1);
    },
  );
}
