// Ceph RADOS Gateway (a real S3 implementation, Debian's radosgw 16.2 "Pacific") on 127.0.0.1:7480 for the S3
// storage tests: a hand-started one-node cluster (mon + memstore OSD, no mgr, auth none) and one S3 user. Recipe and
// gotchas: shared/test-servers-s3.md. Idempotent: a running gateway (its state file present) is reused; a fresh
// cluster takes ~1.5 s. The OSD keeps objects in RAM (memstore), so nothing survives a restart of the daemons.
// Usable three ways: `ensureCephRgw()` from ensure.mjs, as a vitest globalSetup (default export), or `node ceph-rgw.mjs`.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';

export const RGW_HOST = '127.0.0.1';
export const RGW_PORT = 7480;
export const RGW_STATE_DIR = '/tmp/holdfast-test-services/ceph-rgw';
/** JSON file tests read: endpoint, region, accessKeyId, secretAccessKey, forcePathStyle, pids. */
export const RGW_STATE_FILE = join(RGW_STATE_DIR, 'ceph-rgw.json');

// Test-only S3 user of a loopback-only throwaway cluster; not a secret.
const ACCESS_KEY_ID = 'HOLDFASTTESTACCESSKEY';
const SECRET_ACCESS_KEY = 'holdfast-test-secret-key-0123456789abcdef';
// memstore keeps every object in RAM; 2 GiB leaves room for the 1 GiB upload benchmark (only what is stored is used).
const MEMSTORE_BYTES = Number(process.env.HOLDFAST_RGW_MEMSTORE_BYTES ?? 2 * 1024 * 1024 * 1024);
const PACKAGES = ['ceph-mon', 'ceph-osd', 'radosgw', 'ceph-common', 'uuid-runtime', 'curl'];

/** RGW answers an anonymous GET / with a ListAllMyBucketsResult once it serves S3; a bare TCP connect is not enough. */
function answersS3(timeoutMs = 1000) {
  return new Promise((resolve) => {
    const request = http.get({ host: RGW_HOST, port: RGW_PORT, path: '/', timeout: timeoutMs }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve(body.includes('ListAllMyBucketsResult')));
    });
    request.once('timeout', () => {
      request.destroy();
      resolve(false);
    });
    request.once('error', () => resolve(false));
  });
}

function ensureInstalled() {
  if (existsSync('/usr/bin/radosgw') && existsSync('/usr/bin/ceph-osd') && existsSync('/usr/bin/ceph-mon')) return;
  // Several launchers may install at once; the team serialises apt with this lock. Stale lists: update once, retry.
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    spawnSync('flock', ['/tmp/holdfast-apt.lock', 'apt-get', 'install', '-y', '--no-install-recommends', ...PACKAGES], { env, encoding: 'utf8' });
  let result = install();
  if (result.status !== 0) {
    spawnSync('flock', ['/tmp/holdfast-apt.lock', 'apt-get', 'update'], { env, stdio: 'ignore' });
    result = install();
  }
  if (result.status !== 0 || !existsSync('/usr/bin/radosgw')) {
    throw new Error(`cannot install Ceph RGW (apt ${PACKAGES.join(' ')}): ${result.stderr?.slice(-500) ?? 'apt-get failed'}`);
  }
}

// Stops our own daemons by the PIDs in their pid files (only if the PID still runs a ceph daemon), then builds a fresh
// cluster: see shared/test-servers-s3.md section 2 for why each setting is there.
const SETUP_SCRIPT = String.raw`
set -euo pipefail
B="$1"; MEMSTORE_BYTES="$2"; export CEPH_CONF=$B/ceph.conf
if curl -s http://127.0.0.1:7480/ 2>/dev/null | grep -q ListAllMyBucketsResult && [ -f "$B/ceph-rgw.json" ]; then exit 0; fi
for n in ceph-client.rgw.test ceph-osd.0 ceph-mon.a; do f=$B/run/$n.pid; [ -f "$f" ] || continue; p=$(cat "$f")
  # memstore dumps its whole RAM store to disk on a clean stop; the cluster is throwaway, so the OSD gets SIGKILL.
  sig=TERM; [ "$n" = ceph-osd.0 ] && sig=KILL
  if grep -qE 'ceph|radosgw' /proc/$p/comm 2>/dev/null; then kill -$sig $p 2>/dev/null || true
    # A zombie (exited, not yet reaped by PID 1) still answers kill -0; it counts as stopped.
    for i in $(seq 100); do grep -qE '^State:\s+[^Z]' /proc/$p/status 2>/dev/null || break; sleep 0.1; done
    kill -9 $p 2>/dev/null || true; fi
  rm -f "$f"; done
rm -rf $B/{mon,osd,run,log,rgw} "$B/ceph-rgw.json" && mkdir -p $B/{mon,osd/ceph-0,run,log,rgw}
FSID=$(uuidgen)
cat > $CEPH_CONF <<CONF
[global]
fsid = $FSID
mon host = [v2:127.0.0.1:13300,v1:127.0.0.1:16789]
mon initial members = a
public addr = 127.0.0.1
cluster addr = 127.0.0.1
public network = 127.0.0.0/8
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
run dir = $B/run
admin socket = $B/run/\$cluster-\$name.asok
log file = $B/log/\$cluster-\$name.log
pid file = $B/run/\$cluster-\$name.pid
mon data = $B/mon/\$cluster-\$id
osd data = $B/osd/\$cluster-\$id
osd objectstore = memstore
memstore device bytes = $MEMSTORE_BYTES
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon data avail warn = 2
paxos propose interval = 0.01
[client]
admin socket =
[client.rgw.test]
admin socket = $B/run/\$cluster-\$name.asok
rgw frontends = beast endpoint=127.0.0.1:7480
rgw data = $B/rgw
rgw dns name =
rgw gc obj min wait = 0
rgw gc processor period = 10
CONF
monmaptool --create --fsid $FSID --addv a '[v2:127.0.0.1:13300,v1:127.0.0.1:16789]' $B/run/monmap >/dev/null
ceph-mon --mkfs -i a --monmap $B/run/monmap </dev/null >>$B/log/setup.log 2>&1
ceph-mon -i a </dev/null >>$B/log/setup.log 2>&1
for i in $(seq 100); do timeout 5 ceph -s --connect-timeout 2 >/dev/null 2>&1 && break; sleep 0.1; done
OSD_UUID=$(uuidgen); ID=$(ceph osd new $OSD_UUID)
ceph-osd -i $ID --mkfs --osd-uuid $OSD_UUID </dev/null >>$B/log/setup.log 2>&1
ceph-osd -i $ID </dev/null >>$B/log/setup.log 2>&1
for i in $(seq 150); do ceph osd stat 2>/dev/null | grep -q ' 1 up' && break; sleep 0.1; done
radosgw -n client.rgw.test --client-mount-timeout 30 </dev/null >>$B/log/setup.log 2>&1
for i in $(seq 300); do curl -s -o /dev/null http://127.0.0.1:7480/ && break; sleep 0.1; done
radosgw-admin user create --uid=holdfast --display-name=holdfast --access-key="$3" --secret="$4" >/dev/null
`;

function pidsOf() {
  const pids = {};
  for (const name of ['ceph-mon.a', 'ceph-osd.0', 'ceph-client.rgw.test']) {
    const file = join(RGW_STATE_DIR, 'run', `${name}.pid`);
    if (existsSync(file)) pids[name] = Number(readFileSync(file, 'utf8').trim());
  }
  return pids;
}

/** Starts the cluster and gateway when they do not answer yet; resolves `'already running'` or `'started'`. */
export async function ensureCephRgw() {
  if ((await answersS3()) && existsSync(RGW_STATE_FILE)) return 'already running';
  if ((await answersS3()) && !existsSync(join(RGW_STATE_DIR, 'run', 'ceph-client.rgw.test.pid'))) {
    throw new Error(`something else answers S3 on ${RGW_HOST}:${RGW_PORT} (no ${RGW_STATE_FILE})`);
  }
  ensureInstalled();
  mkdirSync(RGW_STATE_DIR, { recursive: true });
  // The lock keeps two test runs that start together from building two clusters on the same fixed ports. Output goes
  // to a file, not a pipe: a daemon that kept an inherited pipe open would make spawnSync wait for ever.
  const logFile = join(RGW_STATE_DIR, 'launcher.log');
  const out = openSync(logFile, 'w');
  let setup;
  try {
    setup = spawnSync(
      'flock',
      // -o: the daemons the script starts must not inherit (and so hold for ever) the lock.
      ['-o', join(RGW_STATE_DIR, '.lock'), 'bash', '-c', SETUP_SCRIPT, 'setup', RGW_STATE_DIR, String(MEMSTORE_BYTES), ACCESS_KEY_ID, SECRET_ACCESS_KEY],
      { stdio: ['ignore', out, out], timeout: 120_000 },
    );
  } finally {
    closeSync(out);
  }
  if (setup.status !== 0) {
    const tail = readFileSync(logFile, 'utf8').slice(-800);
    throw new Error(`Ceph RGW setup failed (exit ${setup.status ?? setup.signal}): ${tail} (logs in ${RGW_STATE_DIR}/log and ${logFile})`);
  }
  if (existsSync(RGW_STATE_FILE) && (await answersS3())) return 'already running';
  for (let i = 0; i < 100 && !(await answersS3()); i++) await new Promise((r) => setTimeout(r, 100));
  if (!(await answersS3())) throw new Error(`Ceph RGW did not answer on ${RGW_HOST}:${RGW_PORT} (logs in ${RGW_STATE_DIR}/log)`);
  const state = {
    endpoint: `http://${RGW_HOST}:${RGW_PORT}`,
    region: 'us-east-1',
    forcePathStyle: true,
    accessKeyId: ACCESS_KEY_ID,
    secretAccessKey: SECRET_ACCESS_KEY,
    server: 'ceph-rgw',
    pids: pidsOf(),
  };
  writeFileSync(RGW_STATE_FILE, `${JSON.stringify(state, null, 2)}\n`);
  return 'started';
}

/** True while `pid` runs one of our daemons (a zombie, exited but not yet reaped, counts as gone). */
function isDaemonAlive(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return /^Name:\s+(ceph|radosgw)/m.test(status) && !/^State:\s+Z/m.test(status);
  } catch {
    return false;
  }
}

/**
 * Stops the daemons by the PIDs in their pid files, one after the other (rgw first, mon last: radosgw hangs on
 * shutdown once the OSD is gone), each given 10 s before SIGKILL; `node ceph-rgw.mjs stop`.
 */
export function stopCephRgw() {
  const pids = pidsOf();
  for (const name of ['ceph-client.rgw.test', 'ceph-osd.0', 'ceph-mon.a']) {
    const pid = pids[name];
    if (!pid || !isDaemonAlive(pid)) continue;
    // memstore would first write its whole RAM store to disk on SIGTERM; the data is throwaway.
    process.kill(pid, name === 'ceph-osd.0' ? 'SIGKILL' : 'SIGTERM');
    for (let i = 0; i < 100 && isDaemonAlive(pid); i++) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    if (isDaemonAlive(pid)) process.kill(pid, 'SIGKILL');
  }
}

/** vitest globalSetup entry: the S3 tests start the gateway themselves and leave it running for the next run. */
export default async function setup() {
  await ensureCephRgw();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const action = process.argv[2] === 'stop' ? Promise.resolve(stopCephRgw()).then(() => 'stopped') : ensureCephRgw();
  action.then(
    (state) => process.stdout.write(`ceph-rgw ${state} on ${RGW_HOST}:${RGW_PORT}\n`),
    (error) => {
      process.stderr.write(`ceph-rgw: ${error.message}\n`);
      process.exit(1);
    },
  );
}
