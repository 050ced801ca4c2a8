// Makes sure the servers the test suite talks to are up, starting them when they are not. Idempotent.
// PostgreSQL runs on the CI machine already; a stopped one is started with the machine's own command.
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import { ensureSshd } from './sshd.mjs';

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

async function ensurePostgres() {
  if (await isListening(5432)) return 'already running';
  const versions = readdirSync('/etc/postgresql');
  if (versions.length === 0) throw new Error('PostgreSQL is not installed (/etc/postgresql is empty)');
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', versions[0], 'main', 'start'], { stdio: 'inherit' });
  await waitFor('PostgreSQL', 5432, 30);
  return 'started';
}

/** Every service the suite needs, in start order. Later suites add sshd, FTP, samba, WebDAV here. */
const services = [
  ['PostgreSQL (127.0.0.1:5432)', ensurePostgres],
  ['OpenSSH sshd (127.0.0.1:2222)', ensureSshd],
];

export async function ensureTestServices() {
  for (const [name, ensure] of services) {
    const state = await ensure();
    process.stdout.write(`test services: ${name} ${state}\n`);
  }
  const psql = spawnSync('psql', ['-h', '127.0.0.1', '-U', 'root', '-d', 'postgres', '-Atc', 'select 1'], {
    encoding: 'utf8',
  });
  if (psql.status !== 0 || psql.stdout.trim() !== '1') {
    throw new Error(`PostgreSQL is up but does not accept root@127.0.0.1 (trust auth expected): ${psql.stderr}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureTestServices().catch((error) => {
    process.stderr.write(`test services: ${error.message}\n`);
    process.exit(1);
  });
}
