// What the community adapter tests share: a package written by `holdfast adapters new` in a temp folder outside the
// repository, npm run in it, and a server that loads it from HOLDFAST_PLUGIN_DIR, set up with an admin who signs in.
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { spawnNode, type SpawnedProcess } from '@holdfast/tooling/harness/spawned-process';
import { childEnv, REPO_ROOT, requireBuilt, runCommand, SERVER_MAIN } from '../helpers.js';

export const ADMIN = { name: 'Admin', email: 'admin@example.com', password: 'a long enough password' };

/** An answer of the server's API. */
export interface ApiAnswer {
  status: number;
  body: any;
}

/** The API as the signed-in admin. */
export interface AdminApi {
  call(method: string, path: string, body?: unknown): Promise<ApiAnswer>;
  /** POSTs `body` and expects 201; answers the created object. */
  create(path: string, body: unknown): Promise<any>;
  /** Polls an execution (with its logs) until it is neither Pending nor Running, for at most 60 s. */
  settled(executionId: string): Promise<any>;
}

/** The built server, loading the plugin folder. */
export interface PluginServer {
  process: SpawnedProcess;
  url: string;
  /** The "adapter loaded" log entry of the plugin package `packageName`, if it was loaded. */
  loaded(packageName: string): Record<string, unknown> | undefined;
  /** Sets the server up with {@link ADMIN} and signs in. */
  signIn(): Promise<AdminApi>;
}

/** The community package of one test file (see {@link useCommunityPackage}). */
export interface CommunityPackage {
  /** The temp folder outside the repository (set once beforeAll ran). */
  readonly work: string;
  /** `<work>/plugins`: the server's HOLDFAST_PLUGIN_DIR. */
  readonly pluginDir: string;
  /** `<pluginDir>/<packageName>`: where the package is written. */
  readonly packageDir: string;
  /** `npm <args>` in the package; fails the test with npm's output; answers the output. */
  npm(args: string[], timeoutMs?: number): Promise<string>;
  /** Starts the built server with the plugin folder, HOLDFAST_LOCAL_ROOTS = the work folder; stopped after all tests. */
  startServer(): Promise<PluginServer>;
}

/**
 * Makes the work folder (realpath: on some systems the temp dir is a symlink, and the server reports real paths) before
 * the file's tests, checking it is outside the repository, and removes it, with the server, after them.
 */
export function useCommunityPackage(tempPrefix: string, packageName: string): CommunityPackage {
  let work = '';
  let server: SpawnedProcess | undefined;
  beforeAll(async () => {
    requireBuilt(['kernel', 'sdk/adapter', 'sdk/testkit', 'apps/cli', 'apps/server']);
    work = await realpath(await mkdtemp(join(tmpdir(), tempPrefix)));
    expect(relative(REPO_ROOT, work).startsWith('..')).toBe(true);
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    if (work) await rm(work, { recursive: true, force: true });
  });
  const community: CommunityPackage = {
    get work() {
      return work;
    },
    get pluginDir() {
      return join(work, 'plugins');
    },
    get packageDir() {
      return join(work, 'plugins', packageName);
    },
    async npm(args, timeoutMs = 60_000) {
      const result = await runCommand('npm', args, { cwd: community.packageDir, timeoutMs });
      const output = `${result.stdout}\n${result.stderr}`;
      expect(result.code, `npm ${args.join(' ')}:\n${output}`).toBe(0);
      return output;
    },
    async startServer() {
      const started = spawnNode(SERVER_MAIN, [], {
        ...childEnv(),
        PORT: '0',
        HOLDFAST_DATA_DIR: join(work, 'data'),
        HOLDFAST_PLUGIN_DIR: community.pluginDir,
        HOLDFAST_LOCAL_ROOTS: work,
        LOG_LEVEL: 'info',
      });
      server = started;
      const listening = await started.waitForLog('holdfast listening', 60_000);
      const url = `http://127.0.0.1:${String(listening.port)}`;
      return {
        process: started,
        url,
        loaded: (name) =>
          started.stdoutLines.map((line) => JSON.parse(line) as Record<string, unknown>).find((entry) => entry.msg === 'adapter loaded' && entry.package === name),
        signIn: () => signInAdmin(url),
      };
    },
  };
  return community;
}

async function signInAdmin(url: string): Promise<AdminApi> {
  const json = { 'content-type': 'application/json' };
  const setup = await fetch(`${url}/api/auth/setup`, { method: 'POST', headers: json, body: JSON.stringify(ADMIN) });
  expect(setup.status, await setup.clone().text()).toBe(201);
  const signIn = await fetch(`${url}/api/auth/sign-in`, { method: 'POST', headers: json, body: JSON.stringify({ email: ADMIN.email, password: ADMIN.password }) });
  expect(signIn.status).toBe(200);
  const headers = {
    ...json,
    cookie: (signIn.headers.get('set-cookie') ?? '').split(';')[0]!,
    'x-csrf-token': ((await signIn.json()) as { csrfToken: string }).csrfToken,
  };
  const call = async (method: string, path: string, body?: unknown): Promise<ApiAnswer> => {
    const response = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as any };
  };
  return {
    call,
    async create(path, body) {
      const answer = await call('POST', path, body);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201);
      return answer.body;
    },
    async settled(executionId) {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const answer = await call('GET', `/api/executions/${executionId}?includeLogs=true`);
        expect(answer.status).toBe(200);
        if (!['Pending', 'Running'].includes(answer.body.data.status)) return answer.body.data;
        if (Date.now() > deadline) throw new Error(`execution ${executionId} still ${answer.body.data.status}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    },
  };
}
