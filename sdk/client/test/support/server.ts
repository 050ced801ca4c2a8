import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type ServerHandle } from '@holdfast/server';

export const ADMIN = { email: 'admin@example.test', password: 'correct horse battery staple' };

export interface TestServer {
  url: string;
  handle: ServerHandle;
  close(): Promise<void>;
}

/** The assembled server on libsql in a temp data dir; local destinations may live anywhere under the OS temp dir. */
export async function startTestServer(): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'holdfast-client-test-'));
  const handle = await startServer({
    env: { PORT: '0', HOLDFAST_DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'silent', HOLDFAST_LOCAL_ROOTS: tmpdir() },
    host: '127.0.0.1',
  });
  const setup = await fetch(`${handle.url}/api/auth/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Admin', ...ADMIN }),
  });
  if (setup.status !== 201) throw new Error(`setup failed: ${setup.status} ${await setup.text()}`);
  return {
    url: handle.url,
    handle,
    async close() {
      await handle.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
