// The README's `npx holdfast ...` lines, run as written from the repository root: npx must find the `holdfast` bin
// that `npm ci` links into node_modules/.bin (the committed bin/holdfast.mjs), and the commands must work.
import { execFile } from 'node:child_process';
import { lstat, mkdtemp, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HoldfastClient } from '@holdfast/client';
import { startServer } from '@holdfast/server';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'holdfast-cli-readme-'));
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** The README's code-block lines that `keep` accepts, without their trailing comments. */
async function readmeLines(keep: (line: string) => boolean): Promise<string[]> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  return readme
    .split('\n')
    .filter(keep)
    .map((line) => line.replace(/\s+#.*$/, '').trim());
}

/** The `npx holdfast ...` lines run on this machine (they start at the line's beginning). */
const readmeCommands = () => readmeLines((line) => line.startsWith('npx holdfast '));

/**
 * The indented lines of the README's remote block (a running server), except `login` (the test passes HOLDFAST_URL
 * and HOLDFAST_API_KEY instead) and lines with a placeholder such as `<job-id>`.
 */
const readmeRemoteCommands = () => readmeLines((line) => /^\s+npx holdfast /.test(line) && !line.includes('<') && !line.includes('npx holdfast login '));

describe('README commands from the repository root', () => {
  it('node_modules/.bin/holdfast is linked to the committed bin script', async () => {
    const link = join(ROOT, 'node_modules', '.bin', 'holdfast');
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(resolve(join(ROOT, 'node_modules', '.bin'), await readlink(link))).toBe(resolve(ROOT, 'node_modules/@holdfast/cli/bin/holdfast.mjs'));
    const manifest = JSON.parse(await readFile(join(ROOT, 'apps/cli/package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(manifest.bin.holdfast).toBe('./bin/holdfast.mjs');
  });

  it('runs every `npx holdfast` line of the README, and the key it prints works against the server', async () => {
    const lines = await readmeCommands();
    expect(lines.length).toBeGreaterThanOrEqual(2);
    // The README's defaults write ./data; the test points the same commands at a temp data dir instead.
    const env = { ...process.env, HOLDFAST_DATA_DIR: join(work, 'data'), HOLDFAST_CONFIG: join(work, 'no-login.json'), HOLDFAST_URL: '', HOLDFAST_API_KEY: '' };
    const outputs: string[] = [];
    for (const line of lines) {
      const { stdout, stderr } = await run('sh', ['-c', line], { cwd: ROOT, env, timeout: 60_000 });
      expect(stderr.replace(/^npm warn .*\n/gm, ''), line).toBe('');
      outputs.push(stdout);
    }
    const rawKey = outputs.join('\n').match(/svc_key_[0-9a-f]{40}/)?.[0];
    expect(rawKey, 'the README creates an API key').toBeDefined();

    const handle = await startServer({ env: { PORT: '0', HOLDFAST_DATA_DIR: join(work, 'data'), DATABASE_URL: '', LOG_LEVEL: 'silent' }, host: '127.0.0.1' });
    try {
      const client = new HoldfastClient({ baseUrl: handle.url, apiKey: rawKey });
      const history = await client.unwrap(client.api.GET('/api/history'));
      expect(Array.isArray(history.executions)).toBe(true);
      // The installed bin against the running server: `npx holdfast history` with the README's key.
      const { stdout } = await run('npx', ['holdfast', 'history', '--json'], { cwd: ROOT, env: { ...env, HOLDFAST_URL: handle.url, HOLDFAST_API_KEY: rawKey } });
      expect(JSON.parse(stdout)).toMatchObject({ executions: [] });
      // The remote block as a reader would follow it, with the key the README created: every line must answer.
      const remote = await readmeRemoteCommands();
      expect(remote).toEqual(expect.arrayContaining(['npx holdfast jobs list']));
      for (const line of remote) {
        const answer = await run('sh', ['-c', line], { cwd: ROOT, env: { ...env, HOLDFAST_URL: handle.url, HOLDFAST_API_KEY: rawKey } }).catch((error: { stderr?: string; code?: number }) => error);
        expect('code' in answer ? `exit ${answer.code}: ${answer.stderr}` : '', line).toBe('');
      }
      const version = await run('npm', ['exec', '--', 'holdfast', '--version'], { cwd: ROOT, env });
      expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    } finally {
      await handle.close();
    }
  }, 120_000);
});
