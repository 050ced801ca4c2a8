// A community source adapter takes part in scheduled test restores (issue 40, scope item 2): the engine knows no
// adapter by name, so a source built outside the repository that declares `capabilities.scratchRestore` gets the
// same test restore as PostgreSQL. `holdfast adapters new` writes the package in a temp folder, the author's files
// (fixtures/toy-db: a toy database kept as JSON files, with its scratch databases) replace the stubs, the package's
// own tests run the testkit's describeSourceScratch, and a server loads the built package from HOLDFAST_PLUGIN_DIR,
// backs a toy database up and runs the job's test restore on its cron schedule.
import { copyFile, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT, runNode } from './helpers.js';
import { useCommunityPackage } from './support/community-package.js';

const FIXTURES = join(REPO_ROOT, 'sdk/create-adapter/test/fixtures/toy-db');

const community = useCommunityPackage('holdfast-community-source-', 'holdfast-source-toy-db');
const npm = (args: string[], timeoutMs = 120_000): Promise<string> => community.npm(args, timeoutMs);

describe('a community source adapter written outside the repository', () => {
  it('1. is scaffolded, implements scratch databases, passes describeSourceScratch and builds', async () => {
    const { work, packageDir } = community;
    const scaffolded = await runNode([CLI_BIN, 'adapters', 'new', 'source', 'toy-db', packageDir], { cwd: work });
    expect(scaffolded.code, scaffolded.stderr).toBe(0);
    for (const [fixture, target] of [
      ['config.ts.txt', 'src/config.ts'],
      ['index.ts.txt', 'src/index.ts'],
      ['toy-db-source.ts.txt', 'src/toy-db-source.ts'],
      ['conformance.test.ts.txt', 'test/conformance.test.ts'],
      ['scratch.test.ts.txt', 'test/scratch.test.ts'],
    ]) {
      await copyFile(join(FIXTURES, fixture!), join(packageDir, target!));
    }
    await rm(join(packageDir, 'src/internal'), { recursive: true });
    await npm(['install', '--offline', '--no-audit', '--no-fund']);
    const tested = (await npm(['test'])).replace(/\u001b\[[0-9;]*m/g, '');
    expect(tested).not.toMatch(/Tests\s.*\d+ failed/);
    // The scratch suite ran: declaration, figures, round trip, cleanup.
    expect(tested).toMatch(/test\/scratch\.test\.ts \(4 tests/);
    await npm(['run', 'build']);
  }, 300_000);

  it('2. a server loading it from HOLDFAST_PLUGIN_DIR runs the job\'s scheduled test restore into a throwaway toy database', async () => {
    const toyServer = join(community.work, 'toy-server');
    const storage = join(community.work, 'storage');
    await mkdir(toyServer);
    await mkdir(storage);
    const customers = Array.from({ length: 25 }, (_, id) => ({ id, name: `customer ${id}` }));
    await writeFile(join(toyServer, 'shop.json'), JSON.stringify({ tables: { customers, orders: [{ id: 1 }, { id: 2 }] } }));

    const server = await community.startServer();
    expect(server.loaded('holdfast-source-toy-db')).toMatchObject({ adapter: 'source-toy-db', directory: community.packageDir });
    const { call, create, settled } = await server.signIn();

    const source = await create('/api/adapters', { name: 'Toy server', type: 'database', adapterId: 'toy-db', config: { dataDir: toyServer } });
    const destination = await create('/api/adapters', { name: 'Disk', type: 'storage', adapterId: 'local', config: { path: storage } });
    const job = await create('/api/jobs', {
      name: 'toy shop',
      schedule: '0 3 * * *',
      sourceId: source.id,
      databases: ['shop'],
      compression: 'GZIP',
      destinations: [{ configId: destination.id, priority: 0 }],
    });
    const backup = await settled((await call('POST', `/api/jobs/${job.id}/run`, {})).body.executionId);
    expect(backup.status, JSON.stringify(backup.logs?.slice(-5))).toBe('Success');

    // Scheduled only once a backup exists, so the first firing has something to restore: every minute.
    const scheduled = await call('PUT', `/api/jobs/${job.id}`, { testRestore: { target: { type: 'database' }, schedule: '* * * * *' } });
    expect(scheduled.status, JSON.stringify(scheduled.body)).toBe(200);
    // That backup predates the test restore target, so it recorded no figures; a second one does.
    const second = await settled((await call('POST', `/api/jobs/${job.id}/run`, {})).body.executionId);
    expect(second.status, JSON.stringify(second.logs?.slice(-5))).toBe('Success');

    // The scheduler fires at the next minute boundary (it re-reads schedules every 5 s).
    const deadline = Date.now() + 150_000;
    let last: { executionId: string; status: string } | null = null;
    while (Date.now() < deadline) {
      const time = await call('GET', `/api/jobs/${job.id}/restore-time`);
      expect(time.status).toBe(200);
      last = time.body.data.last;
      if (last && !['Pending', 'Running'].includes(last.status)) break;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    expect(last, 'no scheduled test restore ran within 150 s').not.toBeNull();
    const tested = await settled(last!.executionId);
    const messages = (tested.logs ?? []).map((entry: { message: string }) => entry.message);
    expect(tested.status, JSON.stringify(messages)).toBe('Success');
    // Queued by the test restore scheduler, not by a request.
    expect(messages).toContain('Restore run started (trigger Scheduler: Scheduler)');
    expect(tested.type).toBe('Restore');
    expect(tested.path).toBe(second.path);
    // Checked against the figures recorded at backup time, through the community adapter's scratch().figures.
    expect(messages).toContain('check shop: tables present: ok (2 tables)');
    expect(messages).toContain('check shop: row counts: ok (27 rows in 2 tables match)');
    expect(messages).toContainEqual(expect.stringMatching(/^scratch removed: database hf_test_restore_[0-9a-f]{12}_0 on Toy server$/));
    // The throwaway database is gone from the toy server; the original is untouched.
    expect(await readdir(toyServer)).toEqual(['shop.json']);
    const recorded = await call('GET', `/api/jobs/${job.id}/restore-time`);
    expect(recorded.body.data).toMatchObject({ measuredExecutionId: tested.id });
    expect(recorded.body.data.measuredRestoreMs).toBeGreaterThanOrEqual(0);
  }, 300_000);
});
