import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseExpiry } from '../src/commands/keys.js';
import { spawnNode, type SpawnedProcess } from '@holdfast/tooling/harness/spawned-process';

const CLI = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const KEY_PATTERN = /^svc_key_[0-9a-f]{40}$/;

let workDir: string;
const spawned: SpawnedProcess[] = [];

beforeEach(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'holdfast-cli-identity-'));
});

afterEach(async () => {
  for (const process of spawned.splice(0)) {
    if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill('SIGKILL');
  }
  await rm(workDir, { recursive: true, force: true });
});

function holdfast(args: string[]): SpawnedProcess {
  // HOLDFAST_CONFIG: no stored login, so `keys` uses the local database even if this machine has run `holdfast login`.
  const process = spawnNode(CLI, args, { PATH: globalThis.process.env.PATH, HOLDFAST_DATA_DIR: join(workDir, 'data'), PORT: '0', HOLDFAST_CONFIG: join(workDir, 'no-login.json') });
  spawned.push(process);
  return process;
}

async function run(args: string[]) {
  const process = holdfast(args);
  const { code } = await process.exited;
  return { code, stdout: process.stdoutLines.join('\n'), stderr: process.stderr() };
}

describe('holdfast admin and keys', () => {
  it('bootstraps an administrator once, issues a key that works against the server, lists it without the secret and revokes it', async () => {
    const created = await run(['admin', 'create', '--email', 'root@example.test', '--password', 'long enough password']);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^Created super administrator root@example\.test/);

    const again = await run(['admin', 'create', '--email', 'second@example.test', '--password', 'long enough password']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^holdfast: .*(exist|already)/i);

    const issued = await run(['keys', 'create', '--name', 'ci pipeline', '--permissions', 'jobs:execute,history:read', '--expires', '30d']);
    expect(issued.code).toBe(0);
    const rawKey = issued.stdout.split('\n')[1]!;
    expect(rawKey).toMatch(KEY_PATTERN);

    const listed = await run(['keys', 'list', '--json']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(rawKey);
    const [key] = JSON.parse(listed.stdout) as Array<{ id: string; name: string; prefix: string; permissions: string[]; enabled: boolean }>;
    expect(key).toMatchObject({ name: 'ci pipeline', prefix: rawKey.slice(0, 16), permissions: ['jobs:execute', 'history:read'], enabled: true });
    // Issue 45.4: a key cannot delete backups unless created with the option.
    expect((key as { allowBackupDeletion?: boolean }).allowBackupDeletion).toBe(false);
    const deleting = await run(['keys', 'create', '--name', 'pruner', '--permissions', 'storage:delete', '--allow-backup-deletion', '--json']);
    expect(deleting.code, deleting.stderr).toBe(0);
    expect(JSON.parse(deleting.stdout).apiKey).toMatchObject({ name: 'pruner', allowBackupDeletion: true });
    expect((await run(['keys', 'revoke', JSON.parse(deleting.stdout).apiKey.id])).code).toBe(0);

    // The key authenticates against a real server on the same data directory.
    const server = holdfast(['serve']);
    const { port } = (await server.waitForLog('holdfast listening', 30_000)) as { port: number };
    const permissions = await fetch(`http://127.0.0.1:${port}/api/permissions`, { headers: { authorization: `Bearer ${rawKey}` } });
    const audit = await fetch(`http://127.0.0.1:${port}/api/audit`, { headers: { authorization: `Bearer ${rawKey}` } });
    expect(permissions.status).not.toBe(401);
    expect(audit.status).toBe(403);
    server.child.kill('SIGTERM');
    await server.exited;

    const revoked = await run(['keys', 'revoke', key!.id]);
    expect(revoked.code).toBe(0);
    const after = await run(['keys', 'list', '--json']);
    expect(JSON.parse(after.stdout)).toEqual([]);
  });

  it('refuses bad key input with a one-line error', async () => {
    await run(['admin', 'create', '--email', 'root@example.test', '--password', 'long enough password']);
    const unknownPermission = await run(['keys', 'create', '--name', 'x', '--permissions', 'jobs:teleport']);
    expect(unknownPermission.code).toBe(1);
    expect(unknownPermission.stderr).toMatch(/^holdfast: .*jobs:teleport/);
    const unknownUser = await run(['keys', 'create', '--name', 'x', '--permissions', 'jobs:read', '--user', 'nobody@example.test']);
    expect(unknownUser.stderr).toMatch(/^holdfast: no user with the email nobody@example\.test/);
  });

  it('parses --expires as days or an ISO date in the future', () => {
    const now = new Date('2026-11-20T00:00:00Z');
    expect(parseExpiry('90d', now)?.toISOString()).toBe('2027-02-18T00:00:00.000Z');
    expect(parseExpiry('2027-01-01', now)?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(parseExpiry(undefined, now)).toBeNull();
    expect(() => parseExpiry('soon', now)).toThrow(/ISO date or a number of days/);
    expect(() => parseExpiry('2020-01-01', now)).toThrow(/in the future/);
  });
});
