// Makes sure every server the test suite talks to is up, installing and starting what is missing. Idempotent: a
// running instance is reused, so `npm test` starts each server once per machine and every suite shares it.
// What cannot be set up ends the run with ONE line naming the service and what to do (README "Tests" lists it all).
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import { ensureAge } from './age.mjs';
import { ensureAzurite } from './azurite.mjs';
import { ensureCephRgw } from './ceph-rgw.mjs';
import { ensureChromium } from './chromium.mjs';
import { ensureMariadb } from './mariadb.mjs';
import { ensureMariadbPitr } from './mariadb-pitr.mjs';
import { ensurePigz } from './pigz.mjs';
import { ensurePodman } from './podman.mjs';
import { ensurePostgresPitr } from './postgres-pitr.mjs';
import { ensureRclone } from './rclone.mjs';
import { ensureRedis } from './redis.mjs';
import { ensureRsyncd } from './rsyncd.mjs';
import { ensureSamba } from './samba.mjs';
import { ensureSqlite } from './sqlite.mjs';
import { ensureSshd } from './sshd.mjs';
import { ensureVsftpd } from './vsftpd.mjs';
import { ensureWebdav } from './webdav.mjs';

function isListening(port, host = '127.0.0.1', timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function waitFor(name, port, seconds) {
  for (let i = 0; i < seconds * 10; i++) {
    if (await isListening(port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} did not come up on 127.0.0.1:${port} within ${seconds} s`);
}

function psql(user, sql) {
  return spawnSync('psql', ['-h', '127.0.0.1', '-U', user, '-d', 'postgres', '-Atc', sql], { encoding: 'utf8' });
}

/**
 * PostgreSQL on 127.0.0.1:5432 with trust auth and a `root` superuser role (the tests connect as root). A stopped
 * cluster is started with the machine's own command; a missing root role is created through the `postgres` role.
 */
async function ensurePostgres() {
  let state = 'already running';
  if (!(await isListening(5432))) {
    const versions = readdirSync('/etc/postgresql', { withFileTypes: true }).filter((entry) => entry.isDirectory());
    if (versions.length === 0) throw new Error('PostgreSQL is not installed: apt-get install postgresql (the tests need a local cluster on 127.0.0.1:5432)');
    execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', versions[0].name, 'main', 'start'], { stdio: 'inherit' });
    await waitFor('PostgreSQL', 5432, 30);
    state = 'started';
  }
  if (psql('root', 'select 1').stdout?.trim() === '1') return state;
  const created = psql('postgres', 'CREATE ROLE root SUPERUSER LOGIN');
  if (created.status !== 0 || psql('root', 'select 1').stdout?.trim() !== '1') {
    throw new Error(
      `PostgreSQL does not accept root@127.0.0.1 without a password and the role could not be created (${(created.stderr ?? '').trim()}): ` +
        'set "host all all 127.0.0.1/32 trust" in pg_hba.conf and run CREATE ROLE root SUPERUSER LOGIN',
    );
  }
  return `${state}, role root created`;
}

/** Every service the suite needs, in start order: `[label, ensure]`. */
export const TEST_SERVICES = [
  ['PostgreSQL (127.0.0.1:5432, trust auth, role root)', ensurePostgres],
  ['PostgreSQL PITR cluster (127.0.0.1:5433, wal_level=replica, roles holdfast_repl/holdfast_norepl/holdfast_repl_nohba)', ensurePostgresPitr],
  ['MariaDB (127.0.0.1:3306, root without password) + mariadb-client', ensureMariadb],
  ['MariaDB PITR server (127.0.0.1:3307, log_bin, server_id=1, ROW; users holdfast_binlog/holdfast_noslave/holdfast_norepl) + mariadb-backup', ensureMariadbPitr],
  ['Redis (127.0.0.1:6379) + redis-tools', ensureRedis],
  ['sqlite3 CLI', ensureSqlite],
  ['OpenSSH sshd (127.0.0.1:2222, user sshtest)', ensureSshd],
  ['rsync daemon (127.0.0.1:8873)', ensureRsyncd],
  ['vsftpd with FTPS (127.0.0.1:2121)', ensureVsftpd],
  ['Samba smbd (127.0.0.1:4445)', ensureSamba],
  ['Apache WebDAV (127.0.0.1:8081)', ensureWebdav],
  ['rclone', ensureRclone],
  ['Azurite blob service (127.0.0.1:10000)', ensureAzurite],
  ['Ceph RADOS Gateway S3 (127.0.0.1:7480)', ensureCephRgw],
  ['Chromium (/usr/bin/chromium, for the web app e2e test)', ensureChromium],
  ['age (/usr/bin/age, decrypts public-key backups in the encryption tests)', ensureAge],
  ['pigz (/usr/bin/pigz, the parallel gzip baseline of the benchmark table, issue 42)', ensurePigz],
  ['podman (a real container engine for the volume source and the image test)', ensurePodman],
];

/** Starts (or finds) every service; rejects with one line naming the first that cannot be set up. */
export async function ensureTestServices(services = TEST_SERVICES, log = (line) => process.stdout.write(line)) {
  if (process.getuid?.() !== 0) {
    log('test services: not running as root: missing apt packages and system users cannot be installed\n');
  }
  for (const [name, ensure] of services) {
    const started = Date.now();
    let state;
    try {
      state = await ensure();
    } catch (error) {
      throw new Error(`${name}: ${String(error?.message ?? error).split('\n')[0]}`);
    }
    log(`test services: ${name} ${state ?? 'ready'} (${Date.now() - started} ms)\n`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureTestServices().catch((error) => {
    process.stderr.write(`test services: cannot start ${error.message}\n`);
    process.exit(1);
  });
}
