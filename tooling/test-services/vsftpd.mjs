// vsftpd 3 for the FTP storage tests: 127.0.0.1:2121 (plain FTP and explicit FTPS, passive ports 30000-30009) and a
// second instance on 127.0.0.1:2990 with implicit TLS (passive ports 30010-30019), user `ftptest` chrooted to its home.
// Idempotent: running instances (state file present) are reused. Usable three ways: `ensureVsftpd()` from ensure.mjs,
// as a vitest globalSetup (default export), or `node vsftpd.mjs`.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { join } from 'node:path';

export const VSFTPD_HOST = '127.0.0.1';
export const VSFTPD_PORT = 2121;
export const VSFTPD_IMPLICIT_PORT = 2990;
export const VSFTPD_STATE_DIR = '/tmp/holdfast-test-services/vsftpd';
/** JSON file tests read: host, port, implicitPort, user, password, home, caPath. */
export const VSFTPD_STATE_FILE = join(VSFTPD_STATE_DIR, 'vsftpd.json');

const USER = 'ftptest';
const PASSWORD = 'ftptest-pass';
const HOME = join(VSFTPD_STATE_DIR, 'home');
const CERT = join(VSFTPD_STATE_DIR, 'ftps.crt');
const KEY = join(VSFTPD_STATE_DIR, 'ftps.key');
const STATE_DIR_FOR_LOCK = VSFTPD_STATE_DIR;

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


/** Ready means the FTP greeting (220) arrives; over TLS from the first byte for the implicit instance. */
function greets(port, implicit, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = implicit
      ? tls.connect({ host: VSFTPD_HOST, port, rejectUnauthorized: false })
      : net.connect({ host: VSFTPD_HOST, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('data', (chunk) => done(chunk.toString('latin1').startsWith('220')));
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
  if (existsSync('/usr/sbin/vsftpd') && existsSync('/usr/bin/openssl')) return;
  const result = aptInstall(['vsftpd', 'openssl']);
  if (result.status !== 0 || !existsSync('/usr/sbin/vsftpd')) {
    throw new Error(`cannot install vsftpd (needed for the FTP tests): ${result.stderr?.slice(-500) ?? 'apt-get failed'}`);
  }
}

function ensureUserAndCertificate() {
  mkdirSync(HOME, { recursive: true });
  // PAM's pam_shells wants a shell listed in /etc/shells.
  if (spawnSync('id', [USER], { stdio: 'ignore' }).status !== 0) execFileSync('useradd', ['-M', '-d', HOME, '-s', '/bin/bash', USER]);
  execFileSync('chpasswd', [], { input: `${USER}:${PASSWORD}\n` });
  execFileSync('chown', [`${USER}:${USER}`, HOME]);
  writeFileSync(join(VSFTPD_STATE_DIR, 'user_list'), `${USER}\n`);
  mkdirSync('/var/run/vsftpd/empty', { recursive: true });
  if (!existsSync(CERT)) {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '3650', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', KEY, '-out', CERT,
    ], { stdio: 'ignore' });
    execFileSync('chmod', ['600', KEY]);
  }
}

function writeConfig(name, port, pasvMin, implicit) {
  const config = join(VSFTPD_STATE_DIR, `${name}.conf`);
  writeFileSync(
    config,
    [
      'listen=YES',
      `listen_address=${VSFTPD_HOST}`,
      `listen_port=${port}`,
      // Daemonise, so the server outlives the test process that started it.
      'background=YES',
      'anonymous_enable=NO',
      'local_enable=YES',
      'write_enable=YES',
      'local_umask=077',
      'chroot_local_user=YES',
      'allow_writeable_chroot=YES',
      `pasv_address=${VSFTPD_HOST}`,
      `pasv_min_port=${pasvMin}`,
      `pasv_max_port=${pasvMin + 9}`,
      'port_enable=NO',
      'pam_service_name=vsftpd',
      'userlist_enable=YES',
      'userlist_deny=NO',
      `userlist_file=${join(VSFTPD_STATE_DIR, 'user_list')}`,
      'secure_chroot_dir=/var/run/vsftpd/empty',
      'seccomp_sandbox=NO',
      // The failed-login delay (1 s by default) would slow the wrong-password tests for nothing.
      'delay_failed_login=0',
      'xferlog_enable=YES',
      `vsftpd_log_file=${join(VSFTPD_STATE_DIR, `${name}.log`)}`,
      'ssl_enable=YES',
      `rsa_cert_file=${CERT}`,
      `rsa_private_key_file=${KEY}`,
      'ssl_ciphers=HIGH',
      // vsftpd 3.0.3 knows no ssl_tlsv1_2/1_3 options (an unknown option makes it exit silently); TLS 1.3 is negotiated.
      'force_local_logins_ssl=NO',
      'force_local_data_ssl=NO',
      // vsftpd's default: data connections must resume the control connection's TLS session (basic-ftp does).
      'require_ssl_reuse=YES',
      ...(implicit ? ['implicit_ssl=YES'] : []),
      '',
    ].join('\n'),
  );
  return config;
}

async function startInstance(name, port, pasvMin, implicit) {
  if (await greets(port, implicit)) return;
  const config = writeConfig(name, port, pasvMin, implicit);
  const start = spawnSync('/usr/sbin/vsftpd', [config], { encoding: 'utf8' });
  if (start.status !== 0) throw new Error(`vsftpd (${name}) exited with ${start.status}: ${start.stderr.slice(-300)}`);
  for (let i = 0; i < 100 && !(await greets(port, implicit)); i++) await new Promise((r) => setTimeout(r, 100));
  if (!(await greets(port, implicit))) throw new Error(`vsftpd (${name}) did not greet on ${VSFTPD_HOST}:${port} within 10 s`);
}

/** Starts both vsftpd instances when they are not answering yet; resolves `'already running'` or `'started'`. */
export async function ensureVsftpd() {
  const isRunning = async () => (await greets(VSFTPD_PORT, false)) && (await greets(VSFTPD_IMPLICIT_PORT, true));
  if ((await isRunning()) && existsSync(VSFTPD_STATE_FILE)) return 'already running';
  return withStartLock(async () => {
    if ((await isRunning()) && existsSync(VSFTPD_STATE_FILE)) return 'already running';
    ensureInstalled();
    mkdirSync(VSFTPD_STATE_DIR, { recursive: true });
    ensureUserAndCertificate();
    rmSync(VSFTPD_STATE_FILE, { force: true });
    await startInstance('explicit', VSFTPD_PORT, 30000, false);
    await startInstance('implicit', VSFTPD_IMPLICIT_PORT, 30010, true);
    const state = { host: VSFTPD_HOST, port: VSFTPD_PORT, implicitPort: VSFTPD_IMPLICIT_PORT, user: USER, password: PASSWORD, home: HOME, caPath: CERT };
    writeFileSync(VSFTPD_STATE_FILE, `${JSON.stringify(state, null, 2)}\n`);
    return 'started';
  });
}

/** vitest globalSetup entry: the FTP tests start the servers themselves. */
export default async function setup() {
  await ensureVsftpd();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureVsftpd().then(
    (state) => process.stdout.write(`vsftpd ${state} on ${VSFTPD_HOST}:${VSFTPD_PORT} (implicit TLS :${VSFTPD_IMPLICIT_PORT})\n`),
    (error) => {
      process.stderr.write(`vsftpd: ${error.message}\n`);
      process.exit(1);
    },
  );
}
