// Stops the servers the test launchers started (`npm run test:services:stop`). They are left running after `npm test`
// on purpose, so the next run reuses them; the machine's own PostgreSQL, MariaDB and Redis are never touched.
// Stops by PID files, and processes whose command line names a file below /tmp/holdfast-test-services (vsftpd runs
// in the background without a PID file): never by a bare process name, so nothing else on the machine is signalled.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { stopCephRgw } from './ceph-rgw.mjs';
import { stopMariadbPitr } from './mariadb-pitr.mjs';
import { stopPostgresPitr } from './postgres-pitr.mjs';

const ROOT = '/tmp/holdfast-test-services';

/** Every `*.pid` file below `directory`, except Ceph's and the PITR servers' (their own stops order the processes). */
function pidFiles(directory) {
  if (!existsSync(directory)) return [];
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (name === 'ceph-rgw' || name === 'postgres-pitr' || name === 'mariadb-pitr') return [];
    if (statSync(path).isDirectory()) return pidFiles(path);
    return name.endsWith('.pid') ? [path] : [];
  });
}

function stopPid(file) {
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 1) return `${file}: no pid`;
  try {
    process.kill(pid, 'SIGTERM');
    return `${file}: stopped ${pid}`;
  } catch (error) {
    return `${file}: ${error.code === 'ESRCH' ? 'not running' : error.message}`;
  }
}

/** PIDs of processes started with a file of the state folder on their command line (vsftpd's config, ...). */
function pidsNamingStateFolder() {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid).filter((entry) => {
    try {
      return readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').some((arg) => arg.startsWith(`${ROOT}/`) && !arg.startsWith(`${ROOT}/ceph-rgw`) && !arg.startsWith(`${ROOT}/postgres-pitr`) && !arg.startsWith(`${ROOT}/mariadb-pitr`));
    } catch {
      return false;
    }
  });
}

stopCephRgw();
process.stdout.write('test services: Ceph RADOS Gateway stopped\n');
process.stdout.write(`test services: PostgreSQL PITR cluster ${stopPostgresPitr()}\n`);
process.stdout.write(`test services: MariaDB PITR server ${stopMariadbPitr()}\n`);
for (const file of pidFiles(ROOT)) process.stdout.write(`test services: ${stopPid(file)}\n`);
for (const pid of pidsNamingStateFolder()) {
  try {
    process.kill(Number(pid), 'SIGTERM');
    process.stdout.write(`test services: stopped ${pid} (${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]})\n`);
  } catch {
    // it ended meanwhile
  }
}
