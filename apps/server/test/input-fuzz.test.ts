// Acceptance 2 of issue 10: a seeded fuzz of every mutating route of the OpenAPI document, on the embedded database
// and on PostgreSQL. Every body carries a poison (support/fuzz-bodies.ts), so every answer must be a 4xx: 0 bypasses
// (a key without permissions always gets 403), 0 5xx, 0 accepted, and no table changed. Reproduce a failure with
// HOLDFAST_FUZZ_SEED=<the seed printed in the failure>.
import { createHash } from 'node:crypto';
import { TOKENS } from '@holdfast/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzzBody, resolver, seededRandom } from './support/fuzz-bodies.js';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

const SEED = Number(process.env.HOLDFAST_FUZZ_SEED ?? 0x5eed_2026);
/** Bodies per database, spread evenly over the routes. */
const BODIES = 3_200;
/** Requests in flight at once: enough to overlap I/O on 2 cores without queueing seconds-long waits. */
const POOL = 8;

interface Target {
  method: string;
  path: string;
  schema: Record<string, unknown>;
  permissions: string[];
  isPublic: boolean;
}

/** Content of every table, hashed per table: rejected bodies must leave all of them as they were. */
async function tableDigests(server: FullServer): Promise<Record<string, string>> {
  const database = server.handle.container.resolve(TOKENS.Database);
  const connection = (database.em() as { getConnection(): { execute(sql: string): Promise<Array<Record<string, unknown>>> } }).getConnection();
  const tables =
    database.dialect === 'sqlite'
      ? (await connection.execute("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")).map((row) => String(row.name))
      : (await connection.execute('select tablename as name from pg_tables where schemaname = current_schema()')).map((row) => String(row.name));
  const digests: Record<string, string> = {};
  // `rate_limits` is the limiter's own ledger: it counts every request, refused or not, which is its job.
  // `engine_processes` (heartbeats) and `scheduler_state` (the scheduler's last planned slot) move with the clock on
  // PostgreSQL whatever the requests do: process bookkeeping, not data a request could change. So do the system task
  // runner's ledger (`system_task_runs`, `task_leases`) and the tasks' last/next run times: a task whose slot falls
  // inside the fuzz's forty seconds (every quarter hour for some) records its run. No fuzzed route writes them (run now
  // has no body), and the tasks' settings (`enabled`, `schedule`) are still compared.
  const clockDriven = new Set(['rate_limits', 'engine_processes', 'scheduler_state', 'system_task_runs', 'task_leases']);
  for (const table of tables.filter((name) => !clockDriven.has(name)).sort()) {
    const rows = await connection.execute(`select * from "${table}"`);
    // Times the server itself moves on every request (a key's last use, a session's sliding expiry) are not content.
    const lines = rows
      .map((row) => JSON.stringify(Object.fromEntries(Object.entries(row).filter(([column]) => !/^(last_used_at|lastUsedAt|expires_at|expiresAt|updated_at|updatedAt|last_run_at|next_run_at)$/.test(column)).sort())))
      .sort();
    digests[table] = `${rows.length}:${createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 16)}`;
  }
  return digests;
}

async function send(server: FullServer, target: Target, caller: Caller, bytes: string | Buffer): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (caller.bearer) headers.authorization = `Bearer ${caller.bearer}`;
  if (caller.cookie) headers.cookie = caller.cookie;
  if (caller.csrf) headers['x-csrf-token'] = caller.csrf;
  const response = await fetch(`${server.url}${target.path.replace(/\{[^}]+\}/g, 'no-such-record')}`, { method: target.method, headers, body: bytes });
  await response.arrayBuffer();
  return response.status;
}

/** Runs `work` over `items` with at most `size` at once. */
async function pool<T>(items: T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: size }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

describe.each(['sqlite', 'postgresql'] as const)('seeded fuzz of every mutating route on %s', (dialect) => {
  let server: FullServer;
  let admin: Caller;
  let bareKey: string;
  let targets: Target[];
  let resolve: ReturnType<typeof resolver>;

  beforeAll(async () => {
    server = await startFullServer(dialect);
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    // The limiter stays on, with limits raised through the settings API (the mechanism the other suites use).
    await liftRateLimits(server, admin);
    const issued = await server.call('POST', '/api/api-keys', admin, { name: 'fuzz without permissions', permissions: [] });
    expect(issued.status, JSON.stringify(issued.body)).toBe(201);
    bareKey = issued.body.key;
    const document = (await server.call('GET', '/api/openapi.json', admin)).body;
    resolve = resolver(document);
    targets = [];
    for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(methods)) {
        const schema = operation.requestBody?.content?.['application/json']?.schema;
        if (!['post', 'put', 'patch', 'delete'].includes(method) || !schema) continue;
        targets.push({
          method: method.toUpperCase(),
          path,
          schema,
          permissions: operation['x-permission'] ? [operation['x-permission']] : (operation['x-permission-any-of'] ?? []),
          isPublic: Array.isArray(operation.security) && operation.security.length === 0,
        });
      }
    }
  }, 60_000);

  afterAll(async () => {
    await server?.close();
  });

  it(`${BODIES} poisoned bodies: every one refused with a 4xx, no 5xx, no bypass, every table unchanged (seed ${SEED})`, async () => {
    expect(targets.length).toBeGreaterThanOrEqual(30);
    for (const route of ['POST /api/auth/sign-in', 'POST /api/auth/setup', 'POST /api/storage/{id}/restore', 'POST /api/groups', 'POST /api/jobs']) {
      expect(targets.map((t) => `${t.method} ${t.path}`)).toContain(route);
    }
    const random = seededRandom(SEED);
    const cases = Array.from({ length: BODIES }, (_, index) => {
      const target = targets[index % targets.length]!;
      return { target, body: fuzzBody(target.schema, resolve, random), asBareKey: !target.isPublic && target.permissions.length > 0 && random() < 0.25 };
    });
    const before = await tableDigests(server);
    const failures: string[] = [];
    const seen = new Map<string, number>();
    await pool(cases, POOL, async ({ target, body, asBareKey }) => {
      const status = await send(server, target, asBareKey ? { bearer: bareKey } : admin, body.bytes);
      seen.set(body.poison.replace(/\(.*\)/, ''), (seen.get(body.poison.replace(/\(.*\)/, '')) ?? 0) + 1);
      const label = `${target.method} ${target.path} [${body.poison}]${asBareKey ? ' as a key without permissions' : ''} -> ${status}`;
      if (asBareKey ? status !== 403 : status < 400 || status >= 500) failures.push(label);
    });
    const after = await tableDigests(server);
    expect(failures.slice(0, 40), `seed ${SEED}: ${failures.length} failures`).toEqual([]);
    expect(after).toEqual(before);
    // Every kind of poison was sent many times.
    expect([...seen.keys()].sort()).toEqual(['broken-json', 'control', 'deep', 'huge', 'nul', 'proto-key', 'surrogate', 'top-level-type', 'unknown-key', 'utf8', 'wrong-types']);
    for (const count of seen.values()) expect(count).toBeGreaterThan(100);
    // The server is still healthy and the admin session still works after the barrage.
    expect((await server.call('GET', '/api/health')).status).toBe(200);
    expect((await server.call('GET', '/api/auth/session', admin)).status).toBe(200);
  }, 150_000);
});
