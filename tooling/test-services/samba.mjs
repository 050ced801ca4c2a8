// Samba smbd on 127.0.0.1:4445 for the SMB storage tests: share `share` (read-write) for user `smbtest`, plus a
// read-only share `readonly`. Idempotent: a running instance (its state file present) is reused. Usable three ways:
// `ensureSamba()` from ensure.mjs, as a vitest globalSetup (default export), or `node samba.mjs`.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';

export const SAMBA_HOST = '127.0.0.1';
export const SAMBA_PORT = 4445;
export const SAMBA_STATE_DIR = '/tmp/holdfast-test-services/samba';
/** JSON file tests read: host, port, share, readonlyShare, user, password, sharePath. */
export const SAMBA_STATE_FILE = join(SAMBA_STATE_DIR, 'samba.json');

const USER = 'smbtest';
const PASSWORD = 'smbtest-pass';
const SHARE_DIR = join(SAMBA_STATE_DIR, 'share');
const CONFIG = join(SAMBA_STATE_DIR, 'smb.conf');
const STATE_DIR_FOR_LOCK = SAMBA_STATE_DIR;

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

/**
 * Ready means smbd answers an SMB2 NEGOTIATE: a bare TCP connect is not enough. The probe is a minimal SMB2
 * NEGOTIATE request (dialect 0x0202); any SMB2 reply (`\xFESMB`) counts.
 */
function negotiates(timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: SAMBA_HOST, port: SAMBA_PORT });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => {
      const header = Buffer.alloc(64);
      header.write('\xfeSMB', 0, 'latin1');
      header.writeUInt16LE(64, 4); // structure size
      header.writeUInt16LE(0, 12); // NEGOTIATE
      const body = Buffer.alloc(38);
      body.writeUInt16LE(36, 0); // structure size
      body.writeUInt16LE(1, 2); // one dialect
      body.writeUInt16LE(1, 4); // signing enabled
      body.writeUInt16LE(0x0202, 36);
      const length = Buffer.alloc(4);
      length.writeUInt32BE(header.length + body.length, 0);
      socket.write(Buffer.concat([length, header, body]));
    });
    socket.once('data', (chunk) => done(chunk.subarray(4, 8).toString('latin1') === '\xfeSMB'));
    socket.once('error', () => done(false));
  });
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
  if (existsSync('/usr/sbin/smbd') && existsSync('/usr/bin/smbclient')) return;
  const result = aptInstall(['samba', 'smbclient']);
  if (result.status !== 0 || !existsSync('/usr/sbin/smbd') || !existsSync('/usr/bin/smbclient')) {
    throw new Error(`cannot install samba and smbclient (needed for the SMB tests): ${result.stderr?.slice(-500) ?? 'apt-get failed'}`);
  }
}

function writeConfig() {
  for (const dir of ['share', 'readonly', 'private', 'lock', 'state', 'cache', 'pid', 'ncalrpc', 'log']) {
    mkdirSync(join(SAMBA_STATE_DIR, dir), { recursive: true });
  }
  // smbd maps the SMB login to a Unix user, which must exist.
  if (spawnSync('id', [USER], { stdio: 'ignore' }).status !== 0) execFileSync('useradd', ['-M', '-d', '/nonexistent', '-s', '/usr/sbin/nologin', USER]);
  execFileSync('chown', [`${USER}:${USER}`, SHARE_DIR]);
  const dir = (name) => join(SAMBA_STATE_DIR, name);
  writeFileSync(
    CONFIG,
    [
      '[global]',
      '  server role = standalone server',
      `  interfaces = ${SAMBA_HOST}`,
      '  bind interfaces only = yes',
      `  smb ports = ${SAMBA_PORT}`,
      '  disable netbios = yes',
      `  private dir = ${dir('private')}`,
      `  lock directory = ${dir('lock')}`,
      `  state directory = ${dir('state')}`,
      `  cache directory = ${dir('cache')}`,
      `  pid directory = ${dir('pid')}`,
      `  ncalrpc dir = ${dir('ncalrpc')}`,
      `  log file = ${dir('log')}/log.%m`,
      `  passdb backend = tdbsam:${dir('private')}/passdb.tdb`,
      '  load printers = no',
      '  printcap name = /dev/null',
      '  disable spoolss = yes',
      '[share]',
      `  path = ${SHARE_DIR}`,
      '  read only = no',
      `  valid users = ${USER}`,
      '  create mask = 0600',
      '[readonly]',
      `  path = ${dir('readonly')}`,
      '  read only = yes',
      `  valid users = ${USER}`,
      '',
    ].join('\n'),
  );
  execFileSync('smbpasswd', ['-c', CONFIG, '-a', '-s', USER], { input: `${PASSWORD}\n${PASSWORD}\n`, stdio: ['pipe', 'ignore', 'pipe'] });
}

function writeState() {
  const state = {
    host: SAMBA_HOST,
    port: SAMBA_PORT,
    share: 'share',
    readonlyShare: 'readonly',
    user: USER,
    password: PASSWORD,
    sharePath: SHARE_DIR,
  };
  writeFileSync(SAMBA_STATE_FILE, `${JSON.stringify(state, null, 2)}\n`);
}

/** Starts smbd when it is not answering yet; resolves `'already running'` or `'started'`. */
export async function ensureSamba() {
  if ((await negotiates()) && existsSync(SAMBA_STATE_FILE)) return 'already running';
  return withStartLock(async () => {
    if (await negotiates()) {
      if (existsSync(SAMBA_STATE_FILE)) return 'already running';
      if (!isOwnInstance(join(SAMBA_STATE_DIR, 'pid', 'smbd.pid'))) {
        throw new Error(`something else answers SMB on ${SAMBA_HOST}:${SAMBA_PORT} (no ${SAMBA_STATE_FILE})`);
      }
      writeState();
      return 'already running';
    }
    ensureInstalled();
    writeConfig();
    rmSync(SAMBA_STATE_FILE, { force: true });
    // -D daemonises (pid file in the pid directory) so smbd outlives the process that started it. Never
    // --no-process-group: smbd signals its whole process group on SIGTERM and would take the caller with it.
    const start = spawnSync('/usr/sbin/smbd', ['-D', '-s', CONFIG], { encoding: 'utf8' });
    if (start.status !== 0) throw new Error(`smbd did not start: ${start.stderr.slice(-500)}`);
    for (let i = 0; i < 100 && !(await negotiates()); i++) await new Promise((r) => setTimeout(r, 100));
    if (!(await negotiates())) throw new Error(`smbd did not answer on ${SAMBA_HOST}:${SAMBA_PORT} within 10 s (see ${SAMBA_STATE_DIR}/log)`);
    writeState();
    return 'started';
  });
}

/** vitest globalSetup entry: the SMB tests start the server themselves. */
export default async function setup() {
  await ensureSamba();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureSamba().then(
    (state) => process.stdout.write(`smbd ${state} on ${SAMBA_HOST}:${SAMBA_PORT}\n`),
    (error) => {
      process.stderr.write(`samba: ${error.message}\n`);
      process.exit(1);
    },
  );
}
