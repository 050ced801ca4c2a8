// Redis 7 on 127.0.0.1:6379 for the Redis source tests, plus the tools they drive (`redis-cli`, `redis-check-rdb`,
// and `redis-server` for the RDB restore check). The CI machine runs Redis already; a stopped one is started with the
// machine's own command. Idempotent. Usable as `ensureRedis()` from ensure.mjs, as a vitest globalSetup, or
// `node redis.mjs`. Tests share this server: each test file uses its own database indexes (10-15 for source-redis).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { aptInstall } from './mariadb.mjs';

export const REDIS_HOST = '127.0.0.1';
export const REDIS_PORT = 6379;
export const REDIS_STATE_DIR = '/tmp/holdfast-test-services/redis';
/** JSON file tests read: host, port, version. */
export const REDIS_STATE_FILE = join(REDIS_STATE_DIR, 'redis.json');

function cli(...args) {
  return spawnSync('redis-cli', ['-h', REDIS_HOST, '-p', String(REDIS_PORT), ...args], { encoding: 'utf8', timeout: 5000 });
}

/** Real readiness: PING answers PONG (a loading server answers LOADING instead). */
function answers() {
  return cli('PING').stdout?.trim() === 'PONG';
}

/** Makes sure the tools exist and the server answers; resolves `'already running'` or `'started'`. */
export async function ensureRedis() {
  const tools = ['/usr/bin/redis-cli', '/usr/bin/redis-check-rdb', '/usr/bin/redis-server'];
  if (!tools.every((tool) => existsSync(tool))) aptInstall(['redis-tools', 'redis-server']);
  let state = 'already running';
  if (!answers()) {
    spawnSync('redis-server', ['--daemonize', 'yes', '--bind', REDIS_HOST, '--port', String(REDIS_PORT), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let i = 0; i < 100 && !answers(); i++) await new Promise((r) => setTimeout(r, 100));
    if (!answers()) throw new Error(`Redis did not answer PING on ${REDIS_HOST}:${REDIS_PORT} within 10 s`);
    state = 'started';
  }
  mkdirSync(REDIS_STATE_DIR, { recursive: true });
  const version = /redis_version:(\S+)/.exec(cli('INFO', 'server').stdout)?.[1] ?? 'unknown';
  writeFileSync(REDIS_STATE_FILE, `${JSON.stringify({ host: REDIS_HOST, port: REDIS_PORT, version }, null, 2)}\n`);
  return state;
}

/** vitest globalSetup entry. */
export default async function setup() {
  await ensureRedis();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureRedis().then(
    (state) => process.stdout.write(`redis ${state} on ${REDIS_HOST}:${REDIS_PORT}\n`),
    (error) => {
      process.stderr.write(`redis: ${error.message}\n`);
      process.exit(1);
    },
  );
}
