// The container image, end to end against a real engine (podman): built from a clean clone on a Debian base made
// from Debian's packages; run as its non-root user with a read-only root file system, one /data volume and a tmpfs
// /tmp; it answers /api/health within the start budget, serves the web app, creates the first admin from
// HOLDFAST_ADMIN_EMAIL + HOLDFAST_ADMIN_PASSWORD_FILE, backs up the test PostgreSQL and MariaDB (host network) to
// a local destination in /data and to S3 (Ceph) and restores both under new names, equal to the originals.
// Then SIGTERM during a run: the container ends within the grace period, the run closed with a clear message, and a
// new container on the same volume has the data, the key and the history.
// The same image runs a remote agent (`agent --server ...`): paired through the API, online with its health, a backup
// of the test PostgreSQL through it, OFFLINE in its source's health when it stops, the same agent again from its volume.
// Run alone: npm run test:container -- --test-name-pattern image   (docs/operations/container.md)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { HoldfastApi, waitForHealth } from './api.mjs';
import { createMariadbFixture, createPostgresFixture, dropMariadb, dropPostgres, mariadbDump, postgresDump } from './databases.mjs';
import { buildImage } from './image-build.mjs';
import { podman } from './podman.mjs';
import { RGW_STATE_FILE } from '../test-services/ceph-rgw.mjs';
import { SAMBA_STATE_FILE } from '../test-services/samba.mjs';
import { ensureTestServices, TEST_SERVICES } from '../test-services/ensure.mjs';

// Budgets of issue 46; docs/operations/container.md records the figures measured (447 MB on 5 December 2026).
const IMAGE_SIZE_BUDGET_MB = 450;
const FIRST_HEALTH_BUDGET_MS = 5_000;
const GRACE_MS = 5_000;
const UID = '10001';

const id = randomBytes(4).toString('hex');
const volume = `holdfast-test-${id}`;
const port = 39_000 + Math.floor(Math.random() * 900);
const baseUrl = `http://127.0.0.1:${port}`;
const admin = { email: 'admin@example.com', password: `container-test-${id}` };
const names = { pg: `hf_img_pg_${id}`, pgRestored: `hf_img_pg_${id}_r`, maria: `hf_img_my_${id}`, mariaRestored: `hf_img_my_${id}_r` };
const bucket = `holdfast-image-${id}`;
// Set in before(), once the test servers are up (Ceph writes its endpoint and keys when it starts).
let ceph;
let s3;
const secrets = mkdtempSync(join(tmpdir(), 'holdfast-secrets-'));
const containers = [];
let image;
let api;
const state = {};

function startContainer(label) {
  const name = `holdfast-test-${id}-${label}`;
  containers.push(name);
  const startedAt = Date.now();
  podman([
    'run', '-d', '--name', name, '--network=host',
    '--read-only', '--read-only-tmpfs=false', '--tmpfs', '/tmp:rw,size=256m,mode=1777',
    '-v', `${volume}:/data`, '-v', `${secrets}:/run/secrets:ro`,
    '-e', `PORT=${port}`, '-e', `HOLDFAST_ADMIN_EMAIL=${admin.email}`,
    '-e', 'HOLDFAST_ADMIN_PASSWORD_FILE=/run/secrets/admin_password',
    '-e', `HOLDFAST_ENGINE_SHUTDOWN_GRACE_MS=${GRACE_MS}`,
    image,
  ]);
  return { name, startedAt };
}

const containerLogs = (name) => {
  const logs = podman(['logs', name], { allowFailure: true });
  return `${logs.stdout}${logs.stderr}`.split('\n').slice(-30).join('\n');
};

describe('container image', { concurrency: false }, () => {
  before(async () => {
    // The servers this test backs up, writes to and lists (Samba), started when they are not (as npm test does).
    await ensureTestServices(TEST_SERVICES.filter(([name]) => /^(PostgreSQL|MariaDB|Samba|Ceph)/.test(name)), () => undefined);
    ceph = JSON.parse(readFileSync(RGW_STATE_FILE, 'utf8'));
    s3 = new S3Client({ endpoint: ceph.endpoint, region: ceph.region, forcePathStyle: true, credentials: { accessKeyId: ceph.accessKeyId, secretAccessKey: ceph.secretAccessKey } });
    const built = buildImage();
    image = built.image;
    if (built.buildSeconds !== null) console.log(`# image build: ${built.buildSeconds.toFixed(0)} s`);
    writeFileSync(join(secrets, 'admin_password'), `${admin.password}\n`);
    chmodSync(secrets, 0o755);
    chmodSync(join(secrets, 'admin_password'), 0o644);
    createPostgresFixture(names.pg);
    createMariadbFixture(names.maria);
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  });

  after(async () => {
    for (const name of containers) podman(['rm', '-f', '-t', '0', name], { allowFailure: true });
    podman(['volume', 'rm', '-f', volume], { allowFailure: true });
    podman(['volume', 'rm', '-f', `${volume}-agent`], { allowFailure: true });
    dropPostgres(names.pg, names.pgRestored);
    dropMariadb(names.maria, names.mariaRestored);
    rmSync(secrets, { recursive: true, force: true });
    if (!s3) return;
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket })).catch(() => ({}));
    if (listed.Contents?.length) await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: listed.Contents.map(({ Key }) => ({ Key })) } }));
    await s3.send(new DeleteBucketCommand({ Bucket: bucket })).catch(() => undefined);
  });

  test('the image is within its size budget and holds no build tools, sources, tests or dev dependencies', () => {
    const bytes = Number(podman(['image', 'inspect', '--format', '{{.Size}}', image]).stdout.trim());
    const megabytes = bytes / 1_000_000;
    console.log(`# image size: ${megabytes.toFixed(0)} MB uncompressed (budget ${IMAGE_SIZE_BUDGET_MB} MB)`);
    const probe = podman(['run', '--rm', '--entrypoint', 'sh', image, '-c', [
      'for c in npm npx gcc cc make g++ python3 tsc esbuild vite vitest; do command -v $c; done',
      // Holdfast's own sources and tests (third-party packages may keep their src/ and test/ folders).
      'cd /opt/holdfast && ls -d kernel/src kernel/test */*/src */*/test */*/vitest.config.ts 2>/dev/null | grep -v ^node_modules/',
      'ls -d node_modules/typescript node_modules/vitest node_modules/vite node_modules/react node_modules/@types 2>/dev/null',
      'true',
    ].join('; ')]).stdout.trim();
    assert.equal(probe, '', `found in the image: ${probe}`);
    const tools = podman(['run', '--rm', '--entrypoint', 'sh', image, '-c',
      'for c in pg_dump pg_restore pg_basebackup pg_receivewal psql mariadb-dump mariadb-backup mariadb-binlog mariadb redis-cli sqlite3 ssh rsync rclone smbclient zstd; do command -v $c >/dev/null || echo missing $c; done; pg_dump --version']).stdout.trim();
    assert.match(tools, /^pg_dump \(PostgreSQL\) 1[7-9]/, tools);
    assert.ok(megabytes < IMAGE_SIZE_BUDGET_MB, `image is ${megabytes.toFixed(0)} MB, over the ${IMAGE_SIZE_BUDGET_MB} MB budget`);
  });

  // The image removes Samba libraries and other files to fit its budget (tooling/container/slim.sh): the tools an
  // adapter runs must still work, not only be present. smbclient lists the test Samba server's share (host network).
  test('smbclient, rclone and the database tools run in the image', () => {
    const samba = JSON.parse(readFileSync(SAMBA_STATE_FILE, 'utf8'));
    const smb = podman(['run', '--rm', '--network=host', '--entrypoint', 'smbclient', image,
      `//${samba.host}/${samba.share}`, '-p', String(samba.port), '-U', `${samba.user}%${samba.password}`, '-c', 'ls'], { allowFailure: true });
    assert.equal(smb.status, 0, `smbclient failed: ${smb.stdout}${smb.stderr}`);
    assert.match(smb.stdout, /blocks available/);
    const versions = podman(['run', '--rm', '--network=none', '--entrypoint', 'sh', image, '-c',
      'rclone version | head -1 && mariadb-dump --version && mariadb-backup --version 2>&1 | head -1 && redis-cli --version && sqlite3 --version && zstd --version && ssh -V 2>&1 && rsync --version | head -1']);
    assert.match(versions.stdout, /^rclone v/);
  });

  test('a container answers /api/health within the start budget, as a non-root user on a read-only root', async () => {
    const { name, startedAt } = startContainer('first');
    state.first = name;
    let firstHealthMs;
    try {
      firstHealthMs = await waitForHealth(baseUrl, startedAt);
    } catch (error) {
      throw new Error(`${error.message}\n${containerLogs(name)}`);
    }
    // The 5 s budget is for this machine when it is not shared: on a busy one (load above 1.5 per core, as when
    // several suites build at once) it is scaled by the load, and the test says so.
    const load = loadavg()[0] / availableParallelism();
    const budgetMs = load > 1.5 ? Math.round(FIRST_HEALTH_BUDGET_MS * load) : FIRST_HEALTH_BUDGET_MS;
    console.log(`# first health: ${firstHealthMs} ms after podman run (budget ${budgetMs} ms; load ${load.toFixed(1)} per core${load > 1.5 ? ', busy machine: budget scaled' : ''})`);
    const user = podman(['exec', name, 'id', '-u']).stdout.trim();
    assert.equal(user, UID);
    const write = podman(['exec', name, 'sh', '-c', 'touch /opt/holdfast/x 2>&1 || echo read-only'], { allowFailure: true }).stdout;
    assert.match(write, /read-only/i);
    const health = await (await fetch(`${baseUrl}/api/health`)).json();
    assert.equal(health.status, 'ok');
    assert.equal(health.database.dialect, 'sqlite');
    assert.ok(firstHealthMs < budgetMs, `first health after ${firstHealthMs} ms, over the ${budgetMs} ms budget`);
  });

  test('it serves the web app and created the first admin from HOLDFAST_ADMIN_PASSWORD_FILE', async () => {
    const page = await fetch(`${baseUrl}/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type'), /text\/html/);
    assert.match(await page.text(), /<script[^>]+type="module"/);
    api = new HoldfastApi(baseUrl);
    const wrong = await api.request('POST', '/api/auth/sign-in', { email: admin.email, password: `${admin.password}\n` });
    assert.equal(wrong.status, 401, 'the trailing newline of the secret file is not part of the password');
    const signedIn = await api.signIn(admin.email, admin.password);
    assert.equal(signedIn.user.email, admin.email);
    // The generated system key lives in the volume, private to the service user.
    const key = podman(['exec', state.first, 'stat', '-c', '%a %u', '/data/state/system.key']).stdout.trim();
    assert.equal(key, `600 ${UID}`);
    state.keyDigest = podman(['exec', state.first, 'sha256sum', '/data/state/system.key']).stdout.split(' ')[0];
  });

  test('backs up PostgreSQL and MariaDB to a local destination in /data and to S3 (Ceph)', async () => {
    podman(['exec', state.first, 'mkdir', '-p', '/data/backups/jobs']);
    const local = await api.call('POST', '/api/adapters', { name: 'volume', type: 'storage', adapterId: 'local', config: { path: '/data/backups/jobs' } });
    const remote = await api.call('POST', '/api/adapters', {
      name: 'ceph', type: 'storage', adapterId: 's3',
      config: { preset: 'custom', endpoint: ceph.endpoint, region: ceph.region, forcePathStyle: true, bucket, prefix: 'image-test', accessKeyId: ceph.accessKeyId, secretAccessKey: ceph.secretAccessKey },
    });
    const pg = await api.call('POST', '/api/adapters', { name: 'pg', type: 'database', adapterId: 'postgres', config: { host: '127.0.0.1', port: 5432, user: 'root', sslMode: 'disable' } });
    const maria = await api.call('POST', '/api/adapters', { name: 'maria', type: 'database', adapterId: 'mysql', config: { host: '127.0.0.1', port: 3306, user: 'root' } });
    state.storage = { local, remote };
    const destinations = [{ configId: local.id, priority: 0 }, { configId: remote.id, priority: 1 }];
    const job = (source, database) => api.call('POST', '/api/jobs', {
      name: `image ${database}`, schedule: '0 0 1 1 *', enabled: false, sourceId: source.id, databases: [database],
      compression: 'ZSTD', destinations,
    });
    state.pgJob = await job(pg, names.pg);
    state.mariaJob = await job(maria, names.maria);
    for (const key of ['pg', 'maria']) {
      const queued = await api.call('POST', `/api/jobs/${state[`${key}Job`].id}/run`);
      const run = await api.waitForRun(queued.executionId);
      assert.equal(run.status, 'Success', JSON.stringify(run.logs?.slice(-5)));
      const file = run.path.split('/').pop();
      const onVolume = podman(['exec', state.first, 'find', '/data/backups/jobs', '-name', file]).stdout.trim();
      assert.ok(onVolume.endsWith(file), `${file} is not in /data/backups/jobs`);
      const objects = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'image-test/' }));
      assert.ok(objects.Contents?.some(({ Key }) => Key.endsWith(file)), `${file} is not in the bucket`);
      state[`${key}Backup`] = run.path;
    }
  });

  async function restoreAndCompare(storage, file, original, restored, dump) {
    const restore = await api.call('POST', `/api/storage/${storage.id}/restore`, { file, database: restored });
    const restoreRun = await api.waitForRun(restore.executionId);
    assert.equal(restoreRun.status, 'Success', JSON.stringify(restoreRun.logs?.slice(-3)));
    const expected = dump(original);
    assert.ok(expected.includes('CREATE TABLE'), 'the original dump is empty');
    const actual = dump(restored);
    if (actual !== expected) {
      // The dumps are thousands of lines: name the first lines that differ instead of printing both.
      const [a, b] = [expected.split('\n'), actual.split('\n')];
      const at = a.findIndex((line, index) => line !== b[index]);
      const line = at === -1 ? a.length : at;
      assert.fail(`${restored} differs from ${original} at line ${line + 1} of ${a.length}/${b.length}:\n- ${JSON.stringify(a.slice(line, line + 3)).slice(0, 1500)}\n+ ${JSON.stringify(b.slice(line, line + 3)).slice(0, 1500)}`);
    }
  }

  test('restores the MariaDB backup from S3 under a new name, equal to the original', async () => {
    await restoreAndCompare(state.storage.remote, state.mariaBackup, names.maria, names.mariaRestored, mariadbDump);
  });

  // Found by this test: pg_restore 17 (Debian trixie's newest, in the image) writes `SET transaction_timeout = 0`,
  // which PostgreSQL 15 (the test server) rejects; the adapter now logs that lone error
  // (adapters/source-postgres/src/internal/restore-quirks.ts) and the restore succeeds.
  test('restores the PostgreSQL backup from /data under a new name, equal to the original', async () => {
    await restoreAndCompare(state.storage.local, state.pgBackup, names.pg, names.pgRestored, postgresDump);
  });

  // Issue 48 scope 6: the same image runs a remote agent (`agent --server ...`), its key in its own volume. It pairs
  // through the API, shows online with its version and health, backs up the test PostgreSQL through the agent to the
  // local destination, its bound source goes OFFLINE when the agent container stops, and a new agent container on
  // the same volume connects again without a token.
  test('the image runs a remote agent: paired, online with its health, a backup through it, its key kept in its volume', async () => {
    const agentVolume = `${volume}-agent`;
    const created = await api.call('POST', '/api/agents', { name: `container-agent-${id}` });
    const startAgent = (label, env = []) => {
      const name = `holdfast-test-${id}-${label}`;
      containers.push(name);
      podman([
        'run', '-d', '--name', name, '--network=host', '--read-only', '--read-only-tmpfs=false', '--tmpfs', '/tmp:rw,size=64m,mode=1777',
        '-v', `${agentVolume}:/data`, ...env, image, 'agent', '--server', baseUrl, '--max-backoff', '2',
      ]);
      return name;
    };
    const waitAgent = async (what, accept, name) => {
      for (let attempt = 0; attempt < 120; attempt++) {
        const shown = await api.call('GET', `/api/agents/${created.agent.id}`);
        if (accept(shown)) return shown;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      throw new Error(`agent not ${what} within 60 s\n${containerLogs(name)}`);
    };
    {
      const first = startAgent('agent-1', ['-e', `HOLDFAST_AGENT_TOKEN=${created.enrollmentToken}`]);
      const online = await waitAgent('online', (shown) => shown.status === 'online' && shown.health, first);
      assert.match(online.version, /^\d+\.\d+\.\d+/);
      assert.ok(online.adapters.includes('@holdfast/source-postgres'), online.adapters.join(', '));
      assert.ok(online.health.stateDisk && online.health.stateDisk.totalBytes > 0, JSON.stringify(online.health));
      assert.match(online.health.tools.find((tool) => tool.name === 'pg_dump')?.version ?? '', /^pg_dump \(PostgreSQL\) 1[7-9]/);
      // The image's health check passes for an agent container (it serves no HTTP).
      const check = podman(['healthcheck', 'run', first], { allowFailure: true });
      assert.equal(check.status, 0, `health check of the agent container failed: ${check.stdout}${check.stderr}`);
      // The key is in the agent's volume, private to the service user.
      assert.equal(podman(['exec', first, 'stat', '-c', '%a %u', '/data/agent/agent-key.pem']).stdout.trim(), `600 ${UID}`);

      const source = await api.call('POST', '/api/adapters', { name: `pg via agent ${id}`, type: 'database', adapterId: 'postgres', config: { host: '127.0.0.1', port: 5432, user: 'root', sslMode: 'disable' }, agentId: created.agent.id });
      const job = await api.call('POST', '/api/jobs', { name: `agent ${names.pg}`, schedule: '0 0 1 1 *', enabled: false, sourceId: source.id, databases: [names.pg], compression: 'ZSTD', destinations: [{ configId: state.storage.local.id, priority: 0 }] });
      const queued = await api.call('POST', `/api/jobs/${job.id}/run`);
      const run = await api.waitForRun(queued.executionId);
      assert.equal(run.status, 'Success', JSON.stringify(run.logs?.slice(-5)));
      assert.match(JSON.stringify(run.logs), /agent: /, 'the run log holds no line from the agent');
      const file = run.path.split('/').pop();
      assert.ok(podman(['exec', state.first, 'find', '/data/backups/jobs', '-name', file]).stdout.trim().endsWith(file));

      // The agent container stops: its bound source is OFFLINE, naming it.
      podman(['stop', '-t', '10', first]);
      let latest;
      for (let attempt = 0; attempt < 40 && latest?.status !== 'OFFLINE'; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        [latest] = (await api.call('GET', `/api/adapters/${source.id}/health`)).entries;
      }
      assert.deepEqual({ status: latest?.status, error: latest?.error }, { status: 'OFFLINE', error: `agent "container-agent-${id}" is offline` });

      // A new container on the same volume, without a token, is the same agent.
      const second = startAgent('agent-2');
      await waitAgent('online again', (shown) => shown.status === 'online', second);
      assert.equal(podman(['inspect', '--format', '{{.State.Running}}', second]).stdout.trim(), 'true');
    }
  });

  test('SIGTERM during a run: the container ends within the grace period and the run is closed with a clear message', async () => {
    // pg_dump waits for this lock, so the run is still going when the container is stopped.
    const holder = spawn('psql', ['-h', '127.0.0.1', '-U', 'root', '-d', names.pg, '-c', 'BEGIN; LOCK TABLE items IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(300);'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const queued = await api.call('POST', `/api/jobs/${state.pgJob.id}/run`);
      state.interrupted = queued.executionId;
      for (let i = 0; i < 100; i++) {
        const run = await api.call('GET', `/api/executions/${queued.executionId}`);
        if (run.status === 'Running') break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const stopping = Date.now();
      podman(['stop', '-t', '120', state.first]);
      const stopSeconds = (Date.now() - stopping) / 1000;
      console.log(`# stop during a run: ${stopSeconds.toFixed(1)} s (grace ${GRACE_MS / 1000} s)`);
      const exitCode = podman(['inspect', '--format', '{{.State.ExitCode}}', state.first]).stdout.trim();
      assert.equal(exitCode, '0', `exit code ${exitCode} (137 = killed, not a clean shutdown)\n${containerLogs(state.first)}`);
      assert.ok(stopSeconds < GRACE_MS / 1000 + 20, `stopping took ${stopSeconds} s`);
    } finally {
      holder.kill();
    }
  });

  test('a new container on the same volume has the data, the key and the history', async () => {
    const { name, startedAt } = startContainer('second');
    await waitForHealth(baseUrl, startedAt).catch((error) => {
      throw new Error(`${error.message}\n${containerLogs(name)}`);
    });
    const digest = podman(['exec', name, 'sha256sum', '/data/state/system.key']).stdout.split(' ')[0];
    assert.equal(digest, state.keyDigest, 'the system key changed');
    api = new HoldfastApi(baseUrl);
    await api.signIn(admin.email, admin.password);
    const interrupted = await api.call('GET', `/api/executions/${state.interrupted}?includeLogs=true`);
    assert.ok(['Cancelled', 'Failed'].includes(interrupted.status), `the interrupted run is ${interrupted.status}`);
    assert.match(JSON.stringify(interrupted), /grace period ran out/);
    const { executions } = await api.call('GET', '/api/history');
    assert.ok(executions.some((row) => row.id === state.interrupted), 'the interrupted run is not in the history');
    assert.ok(executions.filter((row) => row.status === 'Success').length >= 3, `history: ${JSON.stringify(executions).slice(0, 300)}`);
    // The stored S3 secret still decrypts with the key in the volume: the connection test passes.
    const tested = await api.call('POST', '/api/adapters/test-connection', { id: state.storage.remote.id });
    assert.equal(tested.success, true, JSON.stringify(tested));
  });
});
