// Identity acceptance 4: two server processes on one PostgreSQL share the rate-limit counters of one client IP.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createThrowawayPostgres, type ThrowawayDatabase } from '@holdfast/tooling/harness/test-site';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type ServerHandle } from '../src/start-server.js';

describe('rate limits shared by two server processes on one PostgreSQL', () => {
  let postgres: ThrowawayDatabase | undefined;
  const handles: ServerHandle[] = [];
  const dirs: string[] = [];

  afterAll(async () => {
    for (const handle of handles) await handle.close();
    await postgres?.drop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('counts sign-in attempts sent to either server against one budget: the sixth within a minute gets 429', async () => {
    postgres = await createThrowawayPostgres();
    // Both processes hold the same system key, as two replicas of one installation do.
    const systemKey = randomBytes(32).toString('hex');
    for (let i = 0; i < 2; i++) {
      const dataDir = await mkdtemp(join(tmpdir(), `holdfast-replica-${i}-`));
      dirs.push(dataDir);
      handles.push(
        await startServer({
          env: { PORT: '0', HOLDFAST_DATA_DIR: dataDir, DATABASE_URL: postgres.url, HOLDFAST_ENCRYPTION_KEY: systemKey },
          logger: pino({ level: 'silent' }),
          host: '127.0.0.1',
        }),
      );
    }
    const [a, b] = handles as [ServerHandle, ServerHandle];
    const attempt = async (server: ServerHandle) =>
      fetch(`${server.url}/api/auth/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'nobody@example.test', password: 'wrong password' }),
      });
    const statuses: number[] = [];
    for (const server of [a, b, a, b, a]) statuses.push((await attempt(server)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const sixth = await attempt(b);
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await sixth.json()).toEqual({ error: expect.stringMatching(/Too many requests/) });
  });
});
