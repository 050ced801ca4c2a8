// Boots the assembled server (every feature plugin, every adapter shipped in this repository) in-process on a
// throwaway data directory and returns its OpenAPI document. Used by `npm run generate` and by the drift test.
import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ADMIN = { name: 'Generator', email: 'generator@example.test', password: 'generator password 1' };

/** A fixed environment: the document must not depend on the caller's HOLDFAST_* variables. */
function generatorEnv(dataDir) {
  return { PORT: '0', HOLDFAST_DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'silent' };
}

export async function fetchOpenApiDocument() {
  const { startServer } = await import('@holdfast/server');
  const dataDir = await mkdtemp(join(tmpdir(), 'holdfast-client-generate-'));
  const handle = await startServer({ env: generatorEnv(dataDir), host: '127.0.0.1' });
  try {
    const json = { 'content-type': 'application/json' };
    const setup = await fetch(`${handle.url}/api/auth/setup`, { method: 'POST', headers: json, body: JSON.stringify(ADMIN) });
    if (setup.status !== 201) throw new Error(`setup failed: ${setup.status} ${await setup.text()}`);
    const signIn = await fetch(`${handle.url}/api/auth/sign-in`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: ADMIN.email, password: ADMIN.password }),
    });
    if (signIn.status !== 200) throw new Error(`sign-in failed: ${signIn.status}`);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0];
    const answer = await fetch(`${handle.url}/api/openapi.json`, { headers: { cookie } });
    if (answer.status !== 200) throw new Error(`GET /api/openapi.json answered ${answer.status}`);
    return await answer.json();
  } finally {
    await handle.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
