import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { signIn, type HoldfastClient } from '@holdfast/client';
import { startServer, type ServerHandle } from '@holdfast/server';
import { spawnNode } from '@holdfast/tooling/harness/spawned-process';

export const ADMIN = { email: 'admin@example.test', password: 'correct horse battery staple' };

export interface RemoteServer {
  url: string;
  handle: ServerHandle;
  admin: HoldfastClient;
  issueKey(permissions: string[]): Promise<string>;
  close(): Promise<void>;
}

/** The assembled server in this process (libsql, temp data dir, local destinations allowed under the OS temp dir). */
export async function startRemoteServer(): Promise<RemoteServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'holdfast-cli-remote-'));
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
  const admin = await signIn(handle.url, ADMIN);
  return {
    url: handle.url,
    handle,
    admin,
    async issueKey(permissions) {
      const issued = await admin.unwrap(admin.api.POST('/api/api-keys', { body: { name: `cli test ${permissions.join(' ')}`, permissions } }));
      return issued.key;
    },
    async close() {
      await handle.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A port nothing listens on: bound once, then released. */
export async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

export const CLI = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI as a child process with only the given environment (plus PATH), as a CI job would. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv, script = CLI): Promise<CliResult> {
  const child = spawnNode(script, args, { PATH: process.env.PATH, ...env });
  const { code } = await child.exited;
  return { code, stdout: child.stdoutLines.join('\n'), stderr: child.stderr() };
}
