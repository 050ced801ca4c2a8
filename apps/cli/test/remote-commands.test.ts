// The remote commands against the assembled server: the CLI runs as a child process with HOLDFAST_URL and
// HOLDFAST_API_KEY (or a stored login), as a CI job or an operator's terminal would run it.
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, runCli, startRemoteServer, type RemoteServer } from './support/remote-server.js';

let server: RemoteServer;
let work: string;
let configFile: string;
let jobId: string;
let brokenJobId: string;
let halfJobId: string;
let storageId: string;
let ciKey: string;

const NO_STACK = /^\s+at /m;

beforeAll(async () => {
  server = await startRemoteServer();
  work = await mkdtemp(join(tmpdir(), 'holdfast-cli-remote-work-'));
  configFile = join(work, 'config', 'holdfast', 'config.json');
  for (const dir of ['source', 'gone', 'storage', 'odd']) await mkdir(join(work, dir));
  await writeFile(join(work, 'source', 'report.txt'), 'quarterly numbers\n'.repeat(2000));
  await writeFile(join(work, 'gone', 'x.txt'), 'soon deleted');
  // A FIFO is skipped with a warning: the run completes but ends Partial.
  await writeFile(join(work, 'odd', 'fine.txt'), 'fine');
  execFileSync('mkfifo', [join(work, 'odd', 'pipe')]);
  const { admin } = server;
  // The suite sends many requests from one address; the limiter (tested elsewhere) re-reads settings within 5 s,
  // long before the key commands at the end of the file.
  await admin.unwrap(admin.api.PUT('/api/settings', { body: { authPoints: 10_000, apiPoints: 100_000, mutationPoints: 100_000 } }));
  const adapter = (body: Record<string, unknown>) => admin.unwrap(admin.api.POST('/api/adapters', { body: body as never }));
  const source = await adapter({ name: 'files', type: 'database', adapterId: 'directory', config: { paths: [join(work, 'source')] } });
  const gone = await adapter({ name: 'gone', type: 'database', adapterId: 'directory', config: { paths: [join(work, 'gone')] } });
  const storage = await adapter({ name: 'disk', type: 'storage', adapterId: 'local', config: { path: join(work, 'storage') } });
  const odd = await adapter({ name: 'odd', type: 'database', adapterId: 'directory', config: { paths: [join(work, 'odd')] } });
  storageId = storage.id;
  const job = (name: string, sourceId: string) =>
    admin.unwrap(
      admin.api.POST('/api/jobs', {
        body: { name, schedule: '0 3 * * *', sourceId, compression: 'GZIP', destinations: [{ configId: storage.id, priority: 0 }] },
      }),
    );
  jobId = (await job('nightly files', source.id)).id;
  brokenJobId = (await job('broken', gone.id)).id;
  halfJobId = (await job('half', odd.id)).id;
  // The source folder disappears after the job was saved: its runs fail.
  await rm(join(work, 'gone'), { recursive: true });
  ciKey = await server.issueKey(['jobs:execute', 'history:read']);
}, 60_000);

afterAll(async () => {
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** The CLI with a CI-style environment: URL + key in variables, no stored login. */
const ci = (args: string[], key = ciKey) => runCli(args, { HOLDFAST_URL: server.url, HOLDFAST_API_KEY: key, HOLDFAST_CONFIG: configFile });
/** The CLI with only the stored login (after `holdfast login`). */
const stored = (args: string[]) => runCli(args, { HOLDFAST_CONFIG: configFile });

describe('holdfast jobs run --wait (jobs:execute + history:read key)', () => {
  it('shows progress, prints the execution and exits 0 on Success', async () => {
    const result = await ci(['jobs', 'run', jobId, '--wait']);
    // Progress lines (status, percent, stage, elapsed): how many depends on how fast the run is; the last is 100%.
    expect(result.stderr).toMatch(/^(Pending|Running|Success)\s+\d+%  \S+  /m);
    expect(result.stderr).toMatch(/^Success\s+100%  /m);
    expect(result.stderr).toMatch(/^Success {2}Backup \S+ {2}[\d.]+ (B|KiB|MiB)/m);
    expect(result.stdout).toMatch(/^\S+ Success$/);
    expect(result.code).toBe(0);
    expect((await readdir(join(work, 'storage'), { recursive: true })).some((name) => name.endsWith('.tar.gz'))).toBe(true);
  }, 60_000);

  it('exits 3 when the run fails, with the error on stderr', async () => {
    const result = await ci(['jobs', 'run', brokenJobId, '--wait']);
    expect(result.stdout).toMatch(/^\S+ Failed$/);
    expect(result.stderr).toMatch(/^error: /m);
    expect(result.code).toBe(3);
  }, 60_000);

  it('exits 2 when the run is Partial (a FIFO in the source was skipped with a warning)', async () => {
    const result = await ci(['jobs', 'run', halfJobId, '--wait']);
    expect(result.stdout).toMatch(/^\S+ Partial$/);
    expect(result.code).toBe(2);
  }, 60_000);

  it('--json prints the final execution as JSON', async () => {
    const result = await ci(['jobs', 'run', jobId, '--wait', '--lock', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'Success', type: 'Backup', jobId });
  }, 60_000);
});

describe('errors: one line on stderr, a distinct exit code, no stack trace', () => {
  it('unreachable server -> 13', async () => {
    const result = await runCli(['jobs', 'list'], { HOLDFAST_URL: `http://127.0.0.1:${await closedPort()}`, HOLDFAST_API_KEY: ciKey, HOLDFAST_CONFIG: configFile });
    expect(result.code).toBe(13);
    expect(result.stderr).toMatch(/^holdfast: cannot reach http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED.*\n$/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('bad API key -> 11, and the key is not echoed', async () => {
    const bad = 'svc_key_0123456789012345678901234567890123456789';
    const result = await ci(['jobs', 'list'], bad);
    expect(result.code).toBe(11);
    expect(result.stderr).toMatch(/^holdfast: not authenticated .*\n$/);
    expect(result.stderr).not.toContain(bad);
  });

  it('a key without the permission -> 11', async () => {
    const result = await ci(['keys', 'list']);
    expect(result.code).toBe(11);
    expect(result.stderr).toMatch(/^holdfast: not allowed/);
  });

  it('unknown job -> 12', async () => {
    const result = await ci(['jobs', 'run', 'no-such-job', '--wait']);
    expect(result.code).toBe(12);
    expect(result.stderr).toMatch(/^holdfast: not found: .*no-such-job.*\n$/);
  });

  it('no server configured or a malformed URL -> 10', async () => {
    const none = await runCli(['jobs', 'list'], { HOLDFAST_CONFIG: join(work, 'nowhere.json') });
    expect(none.code).toBe(10);
    expect(none.stderr).toMatch(/^holdfast: no server configured/);
    const malformed = await runCli(['jobs', 'list'], { HOLDFAST_URL: 'backups.example', HOLDFAST_API_KEY: 'x', HOLDFAST_CONFIG: configFile });
    expect(malformed.code).toBe(10);
    expect(malformed.stderr).toMatch(/is not a URL/);
    for (const result of [none, malformed]) expect(result.stderr).not.toMatch(NO_STACK);
  });
});

describe('holdfast login and the other remote commands', () => {
  it('login with email and password stores a 0600 file in a 0700 folder, and the stored session drives later commands', async () => {
    // The default location under XDG_CONFIG_HOME (the same file `stored` names); a too-open folder gets tightened.
    await mkdir(join(work, 'config', 'holdfast'), { recursive: true, mode: 0o755 });
    const login = await runCli(['login', server.url, '--email', 'admin@example.test'], {
      XDG_CONFIG_HOME: join(work, 'config'),
      HOLDFAST_PASSWORD: 'correct horse battery staple',
    });
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    expect(login.stdout).toMatch(/^Logged in to http:\/\/127\.0\.0\.1:\d+ as admin@example\.test \(session\)/);
    expect((await stat(configFile)).mode & 0o777).toBe(0o600);
    expect((await stat(join(work, 'config', 'holdfast'))).mode & 0o777).toBe(0o700);

    const jobs = JSON.parse((await stored(['jobs', 'list', '--json'])).stdout) as Array<{ id: string; name: string }>;
    expect(jobs.map((job) => job.name).sort()).toEqual(['broken', 'half', 'nightly files']);
    const shown = await stored(['jobs', 'show', jobId]);
    expect(shown.stdout).toMatch(/name\s+"nightly files"/);
  });

  it('login with an API key (flag or HOLDFAST_API_KEY) stores it for that URL only', async () => {
    const keyConfig = join(work, 'key-login.json');
    const login = await runCli(['login', `${server.url}/`, '--api-key', ciKey], { HOLDFAST_CONFIG: keyConfig });
    expect(login.stdout).toMatch(/as admin@example\.test \(API key\)/);
    expect(login.code).toBe(0);
    expect(JSON.parse(await readFile(keyConfig, 'utf8'))).toEqual({ url: server.url, apiKey: ciKey });
    const history = await runCli(['history', '--json'], { HOLDFAST_CONFIG: keyConfig });
    expect(history.code).toBe(0);
    // Another URL does not get the stored key.
    const elsewhere = await runCli(['history'], { HOLDFAST_CONFIG: keyConfig, HOLDFAST_URL: 'http://127.0.0.1:9' });
    expect(elsewhere.code).toBe(10);
    expect(elsewhere.stderr).toMatch(/^holdfast: no credential for http:\/\/127\.0\.0\.1:9/);

    const badKey = await runCli(['login', server.url], { HOLDFAST_CONFIG: join(work, 'bad-login.json'), HOLDFAST_API_KEY: 'svc_key_nope' });
    expect(badKey.code).toBe(11);
    await expect(stat(join(work, 'bad-login.json'))).rejects.toThrow(/ENOENT/);
  });

  it('history filters, runs logs and runs watch', async () => {
    const failed = JSON.parse((await stored(['history', '--status', 'Failed', '--json'])).stdout) as { executions: Array<{ id: string; status: string }> };
    expect(failed.executions.length).toBeGreaterThan(0);
    expect(failed.executions.every((run) => run.status === 'Failed')).toBe(true);
    const forJob = JSON.parse((await stored(['history', '--job', jobId, '--json'])).stdout) as { executions: Array<{ jobId: string }> };
    expect(forJob.executions.length).toBeGreaterThanOrEqual(2);
    expect(forJob.executions.every((run) => run.jobId === jobId)).toBe(true);

    const table = await stored(['history', '--job', jobId]);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+STARTED\s+TYPE\s+STATUS/);

    const executionId = failed.executions[0]!.id;
    const logs = await stored(['runs', 'logs', executionId]);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toMatch(/ERROR/);

    const watched = await stored(['runs', 'watch', executionId, '--json']);
    const events = watched.stdout.split('\n').map((line) => JSON.parse(line) as { type: string; status?: string });
    expect(events.at(-1)).toMatchObject({ type: 'status', status: 'Failed' });
    expect(watched.code).toBe(3);

    const cancel = await stored(['runs', 'cancel', executionId]);
    expect(cancel.code).toBe(10);
    expect(cancel.stderr).toMatch(/^holdfast: refused: Execution already ended/);
  });

  it('adapters list|test, backups list|download|restore', async () => {
    const storages = JSON.parse((await stored(['adapters', 'list', '--type', 'storage', '--json'])).stdout) as Array<{ id: string }>;
    expect(storages.map((entry) => entry.id)).toContain(storageId);
    const tested = await stored(['adapters', 'test', storageId]);
    expect(tested.stdout).toMatch(/^OK: /);
    expect(tested.code).toBe(0);

    const files = JSON.parse((await stored(['backups', 'list', storageId, '--json'])).stdout) as Array<{ path: string; jobName: string }>;
    const backup = files.find((file) => file.jobName === 'nightly files');
    expect(backup).toBeDefined();

    const saved = join(work, 'downloaded.tar.gz');
    const download = await stored(['backups', 'download', storageId, backup!.path, '-o', saved]);
    expect(download.code).toBe(0);
    expect(await readFile(saved)).toEqual(await readFile(join(work, 'storage', backup!.path)));

    const target = join(work, 'restored');
    const restore = await stored(['backups', 'restore', storageId, backup!.path, '--target-path', target, '--wait']);
    expect(restore.stdout).toMatch(/ Success$/);
    expect(restore.code).toBe(0);
    const restored = (await readdir(target, { recursive: true })).find((name) => name.endsWith('report.txt'));
    expect(await readFile(join(target, restored!), 'utf8')).toBe(await readFile(join(work, 'source', 'report.txt'), 'utf8'));
    // The folder is not empty now: the server refuses (409) until --overwrite says so (issue 47).
    const again = await stored(['backups', 'restore', storageId, backup!.path, '--target-path', target, '--wait']);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/is not empty.*"overwrite": true/);
    const overwritten = await stored(['backups', 'restore', storageId, backup!.path, '--target-path', target, '--overwrite', '--wait']);
    expect(overwritten.stdout).toMatch(/ Success$/);
    expect(overwritten.code).toBe(0);
  }, 60_000);

  it('keys create|list|toggle|rotate|revoke through the API', async () => {
    const created = await stored(['keys', 'create', '--name', 'pipeline', '--permissions', 'jobs:read', '--json']);
    expect(created.code).toBe(0);
    const issued = JSON.parse(created.stdout) as { key: string; apiKey: { id: string } };
    const id = issued.apiKey.id;
    const asKey = (key: string) => runCli(['jobs', 'list', '--json'], { HOLDFAST_URL: server.url, HOLDFAST_API_KEY: key });
    expect((await asKey(issued.key)).code).toBe(0);

    const listed = await stored(['keys', 'list']);
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\s+pipeline\\s+svc_key_\\w+\\s+enabled`, 'm'));
    expect(listed.stdout).not.toContain(issued.key);

    expect((await stored(['keys', 'toggle', id])).stdout).toMatch(/is now disabled/);
    expect((await asKey(issued.key)).code).toBe(11);
    expect((await stored(['keys', 'toggle', id, '--enable'])).stdout).toMatch(/is now enabled/);

    const rotated = await stored(['keys', 'rotate', id]);
    const newKey = rotated.stdout.split('\n')[1]!;
    expect(newKey).toMatch(/^svc_key_/);
    expect((await asKey(issued.key)).code).toBe(11);
    expect((await asKey(newKey)).code).toBe(0);

    expect((await stored(['keys', 'revoke', id])).stdout).toMatch(/^Revoked API key/);
    expect((await asKey(newKey)).code).toBe(11);
  }, 60_000);
});

describe('holdfast completion', () => {
  it('prints a bash script that bash accepts and that knows the remote commands', async () => {
    const result = await runCli(['completion', 'bash'], {});
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('complete -o default -F _holdfast holdfast');
    expect(result.stdout).toMatch(/"jobs"\) words="list show run/);
    const { execFileSync } = await import('node:child_process');
    const script = join(work, 'completion.bash');
    await writeFile(script, result.stdout);
    expect(() => execFileSync('bash', ['-n', script])).not.toThrow();
  });
});
