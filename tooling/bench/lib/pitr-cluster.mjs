// The PITR test cluster (PostgreSQL 15 on 127.0.0.1:5433, started by `npm run test:services`) as the PITR benchmarks
// use it: administration over its Unix socket as `postgres` (trust), Holdfast over TCP as the replication role
// (scram-sha-256), a bench database created for the run and dropped afterwards, and the slots of the run's jobs.
import { readFile } from 'node:fs/promises';
import { run } from './measure.mjs';

export const PITR_SOCKET_DIR = '/tmp/holdfast-test-services/postgres-pitr';
/** Debian's PostgreSQL 15 programs: the cluster's major version (pg_ctl on PATH may be another one). */
export const PG15_BIN = '/usr/lib/postgresql/15/bin';

/** Address, port and the replication role's login, from the launcher's state file. */
export async function pitrCluster() {
  const state = JSON.parse(await readFile(`${PITR_SOCKET_DIR}/postgres-pitr.json`, 'utf8'));
  const repl = state.roles?.repl;
  if (!repl) throw new Error(`${PITR_SOCKET_DIR}/postgres-pitr.json lists no replication role; run npm run test:services`);
  return { host: state.host, port: state.port, user: repl.user, password: repl.password, version: state.version };
}

/** One SQL statement as `postgres` over the cluster's socket; answers the trimmed output. */
export async function pitrPsql(database, sql) {
  const { port } = await pitrCluster();
  const { stdout } = await run('psql', ['-h', PITR_SOCKET_DIR, '-p', String(port), '-U', 'postgres', '-d', database, '-XAtqc', sql]);
  return stdout.trim();
}

/** Bytes of every database of the cluster (what a physical base backup copies besides the bench database). */
export async function clusterDatabases() {
  const rows = await pitrPsql('postgres', "SELECT datname || '|' || pg_database_size(datname) FROM pg_database WHERE datallowconn ORDER BY 1");
  return rows
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [name, bytes] = line.split('|');
      return { name, bytes: Number(bytes) };
    });
}

/**
 * Creates `name` owned by `owner` (so a logical job logging in as that role can dump it) and fills `bench_rows` as
 * lib/generate.mjs does for the pipeline bench, until `pg_database_size` reaches `bytes`; answers the final size.
 */
export async function generatePitrDatabase(name, bytes, owner) {
  await pitrPsql('postgres', `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await pitrPsql('postgres', `CREATE DATABASE "${name}" OWNER "${owner}"`);
  await pitrPsql(name, `CREATE TABLE bench_rows (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, name text NOT NULL, payload text NOT NULL); ALTER TABLE bench_rows OWNER TO "${owner}"`);
  const batch = 200_000; // about 60 MB of table per batch
  for (let offset = 0; ; offset += batch) {
    const size = Number(await pitrPsql(name, 'SELECT pg_database_size(current_database())'));
    if (size >= bytes) {
      // A checkpoint now, so the first base backup does not pay for the load's dirty buffers.
      await pitrPsql(name, 'CHECKPOINT');
      return size;
    }
    await pitrPsql(
      name,
      `INSERT INTO bench_rows SELECT g, now() - (g || ' seconds')::interval, 'customer ' || (g % 9973), md5(g::text) || repeat(md5((g * 7)::text), 3) || (random() * 1e9)::bigint FROM generate_series(${offset + 1}, ${offset + batch}) g`,
    );
  }
}

/** The slot name the source gives a job's stream (docs/pitr.md, "Slot"); the ids used here are short enough not to be cut. */
export const slotOfJob = (jobId) => `holdfast_${jobId.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`;

/** Every slot on the cluster with whether a WAL sender holds it (what the run must leave as it found). */
export async function replicationSlots() {
  const rows = await pitrPsql('postgres', "SELECT slot_name || '|' || active FROM pg_replication_slots ORDER BY 1");
  return rows
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [name, active] = line.split('|');
      return { name, active: active === 't' };
    });
}

/**
 * Drops the slots of `jobIds`, waiting up to `timeoutMs` for the WAL sender of a stream that just stopped to let go.
 * Answers the names still present afterwards (empty when all went).
 */
export async function dropSlotsOfJobs(jobIds, timeoutMs = 20_000) {
  const names = new Set(jobIds.map(slotOfJob));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mine = (await replicationSlots()).filter((slot) => names.has(slot.name));
    for (const slot of mine.filter((candidate) => !candidate.active)) {
      await pitrPsql('postgres', `SELECT pg_drop_replication_slot('${slot.name}')`).catch(() => undefined);
    }
    const left = (await replicationSlots()).filter((slot) => names.has(slot.name));
    if (left.length === 0 || Date.now() > deadline) return left.map((slot) => slot.name);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
