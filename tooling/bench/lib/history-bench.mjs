// History benchmark: seeds executions on PostgreSQL through SQL (generate_series), then times filtered
// `GET /api/history` pages over HTTP against the in-process stack and reads each query's plan.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HistoryStore } from '@holdfast/engine';
import { startHoldfast } from './holdfast-stack.mjs';
import { psql } from './measure.mjs';

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p95 = (values) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.95))];

/** Seeds `rows` executions and times `requests` calls of each query; answers one result per query. */
export async function historyBench({ rows, requests }) {
  const name = `hf_bench_history_${randomBytes(4).toString('hex')}`;
  await psql('postgres', `CREATE DATABASE "${name}"`);
  const dataDir = await mkdtemp(join(tmpdir(), 'holdfast-bench-history-'));
  const holdfast = await startHoldfast({ dataDir, databaseUrl: `postgres://${process.env.PGUSER ?? 'root'}@127.0.0.1:5432/${name}`, startPlugins: false });
  try {
    const source = await holdfast.call('POST', '/api/adapters', { name: 'bench source', type: 'database', adapterId: 'postgres', config: { host: '127.0.0.1', user: 'root' } });
    const storage = await holdfast.call('POST', '/api/adapters', { name: 'bench storage', type: 'storage', adapterId: 'local', config: { path: dataDir } });
    const jobIds = [];
    for (const jobName of ['Orders DB', 'CRM', 'Wiki', 'Billing', 'Analytics', 'Mail', 'Git', 'Files']) {
      const job = await holdfast.call('POST', '/api/jobs', { name: jobName, schedule: '0 3 * * *', sourceId: source.id, destinations: [{ configId: storage.id }] });
      jobIds.push(job.id);
    }
    const started = Date.now();
    await psql(
      name,
      `INSERT INTO executions (id, job_id, type, status, started_at, ended_at, size, path, metadata, trigger_type, trigger_label, created_at, queue_order, lock_backup, cancel_requested, error)
       SELECT md5(g::text)::uuid::text,
              CASE WHEN g % 20 = 0 THEN NULL ELSE (ARRAY['${jobIds.join("','")}'])[1 + g % ${jobIds.length}] END,
              CASE WHEN g % 20 = 0 THEN 'Restore' WHEN g % 17 = 0 THEN 'Verification' ELSE 'Backup' END,
              (ARRAY['Success','Success','Success','Success','Partial','Failed','Cancelled'])[1 + (g * 5) % 7],
              now() - (g * 300 || ' seconds')::interval, now() - (g * 300 - 60 || ' seconds')::interval,
              g * 1000, 'backups/job-' || (g % 8) || '/dump-' || g || '.sql.gz', '{"stage":"05-retention","progress":100}',
              (ARRAY['Manual','Scheduler','Scheduler','Api'])[1 + (g * 3) % 4], CASE WHEN (g * 3) % 4 = 0 THEN 'alice' WHEN (g * 3) % 4 = 3 THEN 'ci-key' ELSE 'Scheduler' END,
              now() - (g * 300 || ' seconds')::interval, g, false, false, NULL
       FROM generate_series(1, ${rows}) g`,
    );
    await psql(name, 'ANALYZE executions');
    const seedSeconds = (Date.now() - started) / 1000;
    const queries = {
      'newest 100 (no parameters)': '/api/history',
      'status=Failed,Partial page 1/50': '/api/history?status=Failed,Partial&page=1&pageSize=50',
      'one job, page 20/50': `/api/history?scope=job:${jobIds[2]}&page=20&pageSize=50`,
      'type+trigger, facets, page 1': '/api/history?type=Backup&trigger=Scheduler&facets=true&page=1&pageSize=50',
      'search "orders", page 1': '/api/history?search=orders&page=1&pageSize=50',
    };
    const store = new HistoryStore(holdfast.db);
    const results = [];
    for (const [label, path] of Object.entries(queries)) {
      await holdfast.call('GET', path); // warm-up
      const times = [];
      let total;
      for (let index = 0; index < requests; index += 1) {
        const begin = process.hrtime.bigint();
        const reply = await holdfast.call('GET', path);
        times.push(Number(process.hrtime.bigint() - begin) / 1e6);
        total = reply.total ?? reply.executions.length;
      }
      results.push({ query: label, path, rows, matching: total, medianMs: median(times), p95Ms: p95(times) });
    }
    // Plans of the page queries as PostgreSQL chooses them on this data (no planner settings changed).
    const filters = {
      'newest 100 (no parameters)': {},
      'search "orders", page 1': { search: { text: 'orders', jobIds: [jobIds[0]] } },
      'status=Failed,Partial page 1/50': { statuses: ['Failed', 'Partial'] },
      'one job, page 20/50': { jobIds: [jobIds[2]] },
      'type+trigger, facets, page 1': { types: ['Backup'], triggers: ['Scheduler'] },
    };
    const knex = holdfast.db.em().getKnex();
    for (const [label, partial] of Object.entries(filters)) {
      const filter = { jobIds: null, isWithoutJob: false, types: [], statuses: [], triggers: [], search: null, ...partial };
      const { sql, bindings } = store.pageSql(filter, 0, 50);
      const plan = await knex.raw(`EXPLAIN ${sql.replace(/\$\d+/g, '?')}`, bindings);
      const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      const entry = results.find((result) => result.query === label);
      entry.usesIndex = /Index (Only )?Scan|Bitmap Index Scan/.test(text) && !/Seq Scan on executions/.test(text);
      entry.plan = text;
    }
    return { seedSeconds, results };
  } finally {
    await holdfast.close();
    await psql('postgres', `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await rm(dataDir, { recursive: true, force: true });
  }
}
