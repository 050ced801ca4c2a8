import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { writeCommunityPackage } from './community-package.js';
import { spawnNode, type SpawnedProcess } from '@holdfast/tooling/harness/spawned-process';

const CLI = fileURLToPath(new URL('../dist/main.js', import.meta.url));

let workDir: string;
let pluginDir: string;
let dataDir: string;
const spawned: SpawnedProcess[] = [];

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npm test does; or npx turbo run build --filter=@holdfast/cli...)`);
});

beforeEach(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'holdfast-cli-'));
  pluginDir = join(workDir, 'plugins');
  dataDir = join(workDir, 'data');
  await mkdir(pluginDir);
});

afterEach(async () => {
  for (const process of spawned.splice(0)) {
    if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill('SIGKILL');
  }
  await rm(workDir, { recursive: true, force: true });
});

function holdfast(args: string[], extraEnv: NodeJS.ProcessEnv = {}): SpawnedProcess {
  const process = spawnNode(CLI, args, {
    PATH: globalThis.process.env.PATH,
    HOLDFAST_DATA_DIR: dataDir,
    HOLDFAST_PLUGIN_DIR: pluginDir,
    PORT: '0',
    ...extraEnv,
  });
  spawned.push(process);
  return process;
}

async function run(args: string[], extraEnv?: NodeJS.ProcessEnv) {
  const process = holdfast(args, extraEnv);
  const { code } = await process.exited;
  return { code, stdout: process.stdoutLines.join('\n'), stderr: process.stderr() };
}

describe('holdfast adapters', () => {
  it('lists a community package from HOLDFAST_PLUGIN_DIR in the table', async () => {
    await writeCommunityPackage(pluginDir, { name: 'holdfast-storage-carrier-pigeon', version: '0.4.2', kind: 'storage', id: 'pigeon' });
    const result = await run(['adapters']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const [header, ...rows] = result.stdout.split('\n');
    expect(header?.split(/\s{2,}/)).toEqual(['KIND', 'ID', 'PACKAGE', 'VERSION']);
    expect(rows.map((row) => row.split(/\s{2,}/))).toContainEqual(['storage', 'pigeon', 'holdfast-storage-carrier-pigeon', '0.4.2']);
  });

  it('prints JSON with --json', async () => {
    const directory = await writeCommunityPackage(pluginDir, { name: 'community-gong', version: '1.0.0', kind: 'notification', id: 'gong' });
    const result = await run(['adapters', '--json']);
    expect(result.code).toBe(0);
    const listed = JSON.parse(result.stdout) as Array<Record<string, unknown>>;
    expect(listed).toContainEqual({
      kind: 'notification',
      id: 'gong',
      displayName: 'Community adapter',
      package: 'community-gong',
      version: '1.0.0',
      directory,
    });
  });

  it('honours HOLDFAST_ADAPTERS_EXCLUDE', async () => {
    await writeCommunityPackage(pluginDir, { name: 'community-gong', version: '1.0.0', kind: 'notification', id: 'gong' });
    const result = await run(['adapters', '--json'], { HOLDFAST_ADAPTERS_EXCLUDE: 'notification-gong' });
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as Array<{ id: string }>).map((entry) => entry.id)).not.toContain('gong');
  });

  it('exits non-zero with one line naming a bad package', async () => {
    await writeCommunityPackage(pluginDir, { name: 'community-from-the-future', version: '9.0.0', kind: 'storage', id: 'future', overrides: { apiVersion: 42 } });
    const result = await run(['adapters']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^holdfast: Adapter package community-from-the-future \(.+\): adapter apiVersion 42 is not supported/);
  });
});

describe('holdfast migrate', () => {
  it('applies migrations on a fresh data dir, then none on the second run', async () => {
    const first = await run(['migrate']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`to ${join(dataDir, 'holdfast.db')}:`);
    expect(first.stdout).toMatch(/^Applied \d+ migration\(s\)/);
    expect(first.stdout).toContain('  20261120-persistence-001-instance');
    expect(existsSync(join(dataDir, 'holdfast.db'))).toBe(true);

    const second = await run(['migrate']);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(`No pending migrations: ${join(dataDir, 'holdfast.db')} is up to date`);
  });

  it('prints JSON with --json (issue 15: --json on every command)', async () => {
    const first = await run(['migrate', '--json']);
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout) as { location: string; applied: string[] };
    expect(report.location).toBe(join(dataDir, 'holdfast.db'));
    expect(report.applied).toContain('20261120-persistence-001-instance');
    expect(JSON.parse((await run(['migrate', '--json'])).stdout)).toEqual({ location: report.location, applied: [] });
    const admin = await run(['admin', 'create', '--email', 'json@example.test', '--password', 'long enough password', '--json']);
    expect(admin.code).toBe(0);
    expect(JSON.parse(admin.stdout)).toEqual({ id: expect.any(String), email: 'json@example.test', isSuperAdmin: true });
  });

  it('exits non-zero with one line on a bad DATABASE_URL', async () => {
    const result = await run(['migrate'], { DATABASE_URL: 'mongodb://admin:secret@db/holdfast' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^holdfast: DATABASE_URL has an unsupported scheme "mongodb"/);
    expect(result.stderr).not.toContain('secret');
  });
});

describe('holdfast serve', () => {
  it('serves /api/health and exits 0 on SIGTERM', async () => {
    const server = holdfast(['serve'], { LOG_LEVEL: 'info' });
    const listening = await server.waitForLog('holdfast listening');
    const response = await fetch(`http://127.0.0.1:${String(listening.port)}/api/health`);
    expect(response.status).toBe(200);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });

  it('--role api serves without running jobs (the engine says so); an unknown role is refused', async () => {
    const server = holdfast(['serve', '--role', 'api'], { LOG_LEVEL: 'info' });
    expect(await server.waitForLog('holdfast listening')).toMatchObject({ role: 'api' });
    expect(await server.waitForLog('engine started')).toMatchObject({ role: 'api' });
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });

    const bad = await run(['serve', '--role', 'boss']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("option '--role <role>' argument 'boss' is invalid. must be one of all, api, worker");
  });
});

describe('holdfast (no such command)', () => {
  it('exits non-zero', async () => {
    const result = await run(['frobnicate']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("unknown command 'frobnicate'");
  });
});
