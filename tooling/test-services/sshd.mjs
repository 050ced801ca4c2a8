// OpenSSH sshd on 127.0.0.1:2222 for the SFTP storage tests: user `sshtest` with a password and an ed25519 client
// key, `Subsystem sftp internal-sftp`. Idempotent: a running instance (its state file present) is reused.
// Usable three ways: `ensureSshd()` from ensure.mjs, as a vitest globalSetup (default export), or `node sshd.mjs`.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';

export const SSHD_HOST = '127.0.0.1';
export const SSHD_PORT = 2222;
export const SSHD_STATE_DIR = '/tmp/holdfast-test-services/sshd';
/** JSON file tests read: host, port, user, password, keyPath, hostKeySha256, home. */
export const SSHD_STATE_FILE = join(SSHD_STATE_DIR, 'sshd.json');

const USER = 'sshtest';
const PASSWORD = 'sshtest-pass';
const HOME = `/home/${USER}`;

function run(command, args, input) {
  execFileSync(command, args, { stdio: ['pipe', 'ignore', 'pipe'], input });
}

/** The SSH banner answers only when sshd is really ready (a bare TCP connect is not enough). */
function bannerSeen(timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: SSHD_HOST, port: SSHD_PORT });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('data', (chunk) => done(chunk.toString('latin1').startsWith('SSH-')));
    socket.once('error', () => done(false));
  });
}

function ensureInstalled() {
  if (existsSync('/usr/sbin/sshd')) return;
  // Stale package lists make the install fail; refresh them once.
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let install = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'openssh-server'], { env, encoding: 'utf8' });
  if (install.status !== 0) {
    spawnSync('apt-get', ['update'], { env, stdio: 'ignore' });
    install = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'openssh-server'], { env, encoding: 'utf8' });
  }
  if (install.status !== 0 || !existsSync('/usr/sbin/sshd')) {
    throw new Error(`cannot install openssh-server: ${install.stderr?.slice(-500) ?? 'apt-get failed'}`);
  }
}

function ensureUserAndKeys() {
  if (spawnSync('id', [USER], { stdio: 'ignore' }).status !== 0) {
    // Exit 9: another `npm run test:services` started at the same time created the user first (seen on 2026-12-07).
    const added = spawnSync('useradd', ['-m', '-s', '/bin/bash', USER], { encoding: 'utf8' });
    if (added.status !== 0 && added.status !== 9) throw new Error(`useradd ${USER} failed (exit ${added.status}): ${added.stderr}`);
  }
  run('chpasswd', [], `${USER}:${PASSWORD}\n`);
  mkdirSync(SSHD_STATE_DIR, { recursive: true });
  const hostKey = join(SSHD_STATE_DIR, 'ssh_host_ed25519_key');
  const clientKey = join(SSHD_STATE_DIR, 'client_ed25519');
  if (!existsSync(hostKey)) run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
  if (!existsSync(clientKey)) run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'holdfast-test', '-f', clientKey]);
  // StrictModes refuses group/world-writable key directories.
  run('install', ['-d', '-m', '700', '-o', USER, '-g', USER, `${HOME}/.ssh`]);
  run('install', ['-m', '600', '-o', USER, '-g', USER, `${clientKey}.pub`, `${HOME}/.ssh/authorized_keys`]);
  return { hostKey, clientKey };
}

/** OpenSSH-style fingerprint (`SHA256:` + unpadded base64 of the key blob) of a `.pub` file. */
function fingerprintOf(publicKeyFile) {
  const blob = Buffer.from(readFileSync(publicKeyFile, 'utf8').trim().split(/\s+/)[1], 'base64');
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

function writeConfig(hostKey) {
  const config = join(SSHD_STATE_DIR, 'sshd_config');
  writeFileSync(
    config,
    [
      `ListenAddress ${SSHD_HOST}:${SSHD_PORT}`,
      `HostKey ${hostKey}`,
      `PidFile ${join(SSHD_STATE_DIR, 'sshd.pid')}`,
      'PasswordAuthentication yes',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'PermitRootLogin no',
      `AllowUsers ${USER}`,
      'UsePAM yes',
      // Tests open many sessions quickly; the default 10:30:100 would drop some.
      'MaxStartups 100',
      'MaxSessions 50',
      'Subsystem sftp internal-sftp',
      '',
    ].join('\n'),
  );
  return config;
}

/** Starts sshd when it is not answering yet; resolves `'already running'` or `'started'`. */
export async function ensureSshd() {
  if ((await bannerSeen()) && existsSync(SSHD_STATE_FILE)) return 'already running';
  if (await bannerSeen()) throw new Error(`something else answers SSH on ${SSHD_HOST}:${SSHD_PORT} (no ${SSHD_STATE_FILE})`);
  ensureInstalled();
  const { hostKey, clientKey } = ensureUserAndKeys();
  const config = writeConfig(hostKey);
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  run('/usr/sbin/sshd', ['-t', '-f', config]);
  rmSync(SSHD_STATE_FILE, { force: true });
  // Without -D sshd daemonises (writes its PidFile) and outlives the process that started it, as `npm test` needs.
  run('/usr/sbin/sshd', ['-f', config, '-E', join(SSHD_STATE_DIR, 'sshd.log')]);
  for (let i = 0; i < 100 && !(await bannerSeen()); i++) await new Promise((r) => setTimeout(r, 100));
  if (!(await bannerSeen())) throw new Error(`sshd did not answer on ${SSHD_HOST}:${SSHD_PORT} within 10 s (see ${SSHD_STATE_DIR}/sshd.log)`);
  const state = {
    host: SSHD_HOST,
    port: SSHD_PORT,
    user: USER,
    password: PASSWORD,
    keyPath: clientKey,
    hostKeySha256: fingerprintOf(`${hostKey}.pub`),
    home: HOME,
  };
  writeFileSync(SSHD_STATE_FILE, `${JSON.stringify(state, null, 2)}\n`);
  return 'started';
}

/** vitest globalSetup entry: the SFTP tests start the server themselves. */
export default async function setup() {
  await ensureSshd();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureSshd().then(
    (state) => process.stdout.write(`sshd ${state} on ${SSHD_HOST}:${SSHD_PORT}\n`),
    (error) => {
      process.stderr.write(`sshd: ${error.message}\n`);
      process.exit(1);
    },
  );
}
