// End to end, issue 47 item 6 (the guided job editor): the built web app in Debian's Chromium against the assembled
// server on the embedded database, used by an editor who may read and write jobs but not read the settings.
// - The next five runs come from the server in the system timezone (America/New_York here), not the browser's or UTC;
//   a schedule the scheduler would not take shows the server's reason and no runs.
// - A field's error goes as soon as that field is fixed; the others stay until they are fixed too.
// - Leaving a form with unsaved changes asks first; cancelling keeps the page and what was typed.
// - Scheduled test restores are set in the editor and load back.
// - Databases are picked from what the source (the test PostgreSQL) holds now, with their sizes.
// - Adapter forms keep timeouts, sizes, restore switches and the SSH tunnel under "Advanced settings".
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerHandle } from '@holdfast/server';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureWebBuilt, findChromium } from './support/browser.js';
import { captureHere, describeViolations, type AxeFinding } from './support/pages.js';
import { signInCaller, useSessionIn, type SessionCaller } from './support/sessions.js';
import { startWebStack } from './support/web-stack.js';

const SHOTS = fileURLToPath(new URL('../test-results/screenshots', import.meta.url));
const STAMP = `${Date.now()}`;
const ADMIN = { email: 'editor-admin@example.test', password: `pw-${STAMP}-harbour light` };
const EDITOR = { email: 'job-editor@example.test', password: `pw-${STAMP}-jobs only` };

const DATABASE = `hf_job_editor_${STAMP}`;
/** Enough databases that the picker's option list always scrolls (as in CI, where other suites add dozens). */
const FILLERS = Array.from({ length: 24 }, (_, index) => `hf_job_editor_${STAMP}_filler_${index}`);
const psql = async (database: string, sql: string) => (await promisify(execFile)('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', database, '-Atc', sql])).stdout.trim();

const chromiumFound = await findChromium();
if ('reason' in chromiumFound) console.warn(`@holdfast/web job-editor e2e skipped: ${chromiumFound.reason}`);
const suite = 'reason' in chromiumFound ? describe.skip : describe;

suite(`guided job editor in Chromium (issue 47, item 6)${'reason' in chromiumFound ? ` (skipped: ${chromiumFound.reason})` : ''}`, () => {
  let server: ServerHandle;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let workDir: string;
  let admin: SessionCaller;
  let editor: SessionCaller;
  const findings: AxeFinding[] = [];
  const ids: Record<string, string> = {};
  const dialogs: string[] = [];
  /** What the next dialog answers: the unsaved-changes test cancels once, then leaves. */
  let acceptDialogs = true;

  const field = (name: string) => page.locator(`[data-field="${name}"]`);
  const go = async (path: string) => {
    await page.goto(`${server.url}${path}`);
    await page.waitForLoadState('networkidle');
  };
  const nextRuns = () => page.getByTestId('next-run').allTextContents();
  /**
   * After Save: the editor goes to the jobs list. Waits long (CI runs this beside every other suite on two cores)
   * and, when the page stays, fails with the errors it shows instead of a bare timeout.
   */
  const leftForJobsList = async () => {
    try {
      await page.waitForURL(`${server.url}/jobs`, { timeout: 60_000 });
      // The URL changes before the router has rendered the list (it renders in a transition): wait for the editor to go.
      await field('job-name').waitFor({ state: 'detached', timeout: 60_000 });
    } catch (error) {
      const shown = await page.locator('[role="alert"], .mantine-InputWrapper-error').allTextContents();
      throw new Error(`the editor stayed on ${page.url()} after Save; it shows: ${JSON.stringify(shown)}`, { cause: error });
    }
  };

  beforeAll(async () => {
    ensureWebBuilt();
    await mkdir(SHOTS, { recursive: true });
    dataDir = await mkdtemp(join(tmpdir(), 'holdfast-web-job-editor-'));
    workDir = await mkdtemp(join(tmpdir(), 'holdfast-web-job-editor-files-'));
    ({ server, browser, admin } = await startWebStack({ dataDir, chromiumPath: (chromiumFound as { path: string }).path, admin: ADMIN }));
    expect((await admin.call('PUT', '/api/settings', { authPoints: 1_000, mutationPoints: 1_000, systemTimezone: 'America/New_York' })).status).toBe(200);
    const made = async (path: string, body: unknown) => {
      const answer = await admin.call('POST', path, body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body.id as string;
    };
    const files = join(workDir, 'files');
    await mkdir(files);
    ids.source = await made('/api/adapters', { type: 'database', adapterId: 'directory', name: 'project files', config: { paths: [files] } });
    ids.destination = await made('/api/adapters', { type: 'storage', adapterId: 'local', name: 'local store', config: { path: join(workDir, 'store') } });
    await psql('postgres', `CREATE DATABASE ${DATABASE}`);
    for (const filler of FILLERS) await psql('postgres', `CREATE DATABASE ${filler}`);
    await psql(DATABASE, 'CREATE TABLE orders AS SELECT n AS id, repeat(md5(n::text), 20) AS note FROM generate_series(1, 20000) AS n');
    ids.postgres = await made('/api/adapters', { type: 'database', adapterId: 'postgres', name: 'orders server', config: { host: '127.0.0.1', user: 'postgres' } });
    const group = await made('/api/groups', { name: 'Job editors', permissions: ['dashboard:read', 'jobs:read', 'jobs:write', 'sources:read', 'destinations:read'] });
    await made('/api/users', { name: 'Eddie Editor', email: EDITOR.email, password: EDITOR.password, groupId: group });
    editor = await signInCaller(server.url, EDITOR.email, EDITOR.password);
    // Settings are re-read within 5 s.
    await new Promise((resolve) => setTimeout(resolve, 5_500));
    context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await useSessionIn(context, server.url, editor);
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void (acceptDialogs ? dialog.accept() : dialog.dismiss());
    });
  }, 120_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(workDir, { recursive: true, force: true });
    await psql('postgres', `DROP DATABASE IF EXISTS ${DATABASE}`).catch(() => undefined);
    for (const filler of FILLERS) await psql('postgres', `DROP DATABASE IF EXISTS ${filler}`).catch(() => undefined);
  });

  it('shows the next five runs in the system timezone to an editor who cannot read the settings', async () => {
    expect((await editor.call('GET', '/api/settings')).status).toBe(403);
    await go('/jobs/new');
    await expect.poll(nextRuns).toHaveLength(5);
    expect(await page.getByTestId('next-runs').textContent()).toContain('Next runs (America/New_York)');
    // Daily at 03:00 New York time: the same wall-clock hour on five different days (the list is in that zone).
    const shown = await nextRuns();
    expect(new Set(shown).size).toBe(5);
    for (const run of shown) expect(run).toMatch(/03:00/);
    await field('job-schedule').fill('0 0 3 * * *');
    await expect.poll(() => page.getByTestId('next-runs').getByRole('status').textContent().catch(() => '')).toMatch(/not a 5-part cron expression/);
    expect(await page.getByTestId('next-run').count()).toBe(0);
    await field('job-schedule').fill('30 4 * * 1');
    await expect.poll(nextRuns).toHaveLength(5);
    for (const run of await nextRuns()) expect(run).toMatch(/04:30/);
    await captureHere(page, SHOTS, 'job-editor-next-runs', findings);
  });

  it('clears a field error once the field is fixed and keeps the others until they are', async () => {
    await go('/jobs/new');
    await page.getByRole('button', { name: 'Save job' }).click();
    await page.getByText('Enter a name').waitFor();
    await page.getByText('Choose a source').first().waitFor();
    await field('job-name').fill('Project files nightly');
    await expect.poll(() => page.getByText('Enter a name').count()).toBe(0);
    expect(await page.getByText('Add at least one destination').count()).toBe(1);
    // Typing into another field while errors are shown never adds new ones before the next Save.
    await field('job-schedule').fill('0 3 * *');
    expect(await page.locator('[data-field="job-schedule"][aria-invalid="true"]').count()).toBe(0);
  });

  it('asks before leaving unsaved changes: cancel keeps the page and the text, leave goes', async () => {
    await go('/jobs/new');
    await field('job-name').fill('Half-typed job');
    acceptDialogs = false;
    dialogs.length = 0;
    await page.getByRole('navigation').getByRole('link', { name: 'Jobs', exact: true }).click();
    await expect.poll(() => dialogs.length).toBe(1);
    expect(dialogs[0]).toMatch(/changes that are not saved/);
    expect(new URL(page.url()).pathname).toBe('/jobs/new');
    expect(await field('job-name').inputValue()).toBe('Half-typed job');
    acceptDialogs = true;
    await page.getByRole('navigation').getByRole('link', { name: 'Jobs', exact: true }).click();
    await page.waitForURL(`${server.url}/jobs`);
    expect(dialogs).toHaveLength(2);
  });

  it('sets a scheduled test restore, saves without a question, and loads it back', async () => {
    await go('/jobs/new');
    dialogs.length = 0;
    await field('job-name').fill('Files with test restores');
    await field('job-source').click();
    await page.getByRole('option', { name: 'project files' }).click();
    await expect.poll(() => field('job-source').inputValue()).toBe('project files');
    await field('job-add-destination').click();
    await page.getByRole('option', { name: 'local store' }).click();
    await page.getByText(/^1\. local store$/).waitFor();
    await field('job-test-restore-target').click();
    await page.getByRole('option', { name: /throwaway folder/ }).click();
    await expect.poll(() => field('job-test-restore-target').inputValue()).toMatch(/throwaway folder/);
    const scratch = join(workDir, 'scratch');
    await field('job-test-restore-path').fill(scratch);
    await field('job-test-restore-schedule').fill('0 5 * * 0');
    await field('job-test-restore-tolerance').fill('2');
    await captureHere(page, SHOTS, 'job-editor-test-restore', findings);
    await page.getByRole('button', { name: 'Save job' }).click();
    await leftForJobsList();
    expect(dialogs).toEqual([]);
    const jobs = (await editor.call('GET', '/api/jobs')).body as Array<{ id: string; name: string; testRestore: unknown }>;
    const saved = jobs.find((job) => job.name === 'Files with test restores')!;
    expect(saved.testRestore).toEqual({ target: { type: 'directory', path: scratch }, schedule: '0 5 * * 0', rowCountTolerancePercent: 2 });
    await go(`/jobs/${saved.id}`);
    await expect.poll(() => field('job-test-restore-path').inputValue()).toBe(scratch);
    expect(await field('job-test-restore-schedule').inputValue()).toBe('0 5 * * 0');
    // Loaded as saved: nothing to lose, so leaving does not ask.
    await page.getByRole('navigation').getByRole('link', { name: 'Jobs', exact: true }).click();
    await page.waitForURL(`${server.url}/jobs`);
    expect(dialogs).toEqual([]);
  });

  it('picks databases from what the source holds now, with their sizes; a name can still be typed', async () => {
    await go('/jobs/new');
    await field('job-source').click();
    await page.getByRole('option', { name: 'orders server' }).click();
    await page.getByText(/Pick from the \d+ databases? the source holds now, typing narrows the list/).waitFor();
    await field('job-databases').click();
    // Over 24 databases here: the list shows 8 and does not scroll (a scrolling list is a region the keyboard
    // cannot reach, as axe said in CI); typing narrows it.
    await expect.poll(() => page.locator('.mantine-TagsInput-dropdown [role="option"]').count()).toBe(8);
    const dropdown = page.locator('.mantine-TagsInput-dropdown');
    expect(await dropdown.evaluate((element) => [...element.querySelectorAll('*')].some((inner) => inner.scrollHeight > inner.clientHeight + 1 && getComputedStyle(inner).overflowY !== 'visible'))).toBe(false);
    await captureHere(page, SHOTS, 'job-editor-databases-list', findings);
    await field('job-databases').fill(DATABASE.slice(0, -1));
    const option = page.getByRole('option', { name: new RegExp(`^${DATABASE} \\(\\d`) });
    await option.waitFor();
    // 20,000 rows of 640 characters: several MiB on the server, shown with the name.
    expect(await option.textContent()).toMatch(/\((\d+(\.\d+)? MiB)\)$/);
    await option.click();
    await field('job-databases').fill('made_later');
    await field('job-databases').press('Enter');
    const pills = await page.locator('.mantine-TagsInput-pill').allTextContents();
    expect(pills).toEqual([DATABASE, 'made_later']);
    await captureHere(page, SHOTS, 'job-editor-databases', findings);
    acceptDialogs = true;
  });

  it('adapter forms show the basic settings and fold timeouts, restore switches and SSH under Advanced', async () => {
    const adminContext = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    try {
      await useSessionIn(adminContext, server.url, admin);
      const adminPage = await adminContext.newPage();
      adminPage.setDefaultTimeout(20_000);
      const on = (name: string) => adminPage.locator(`[data-field="${name}"]`);
      await adminPage.goto(`${server.url}/adapters/new/storage`);
      await on('adapterId').click();
      await adminPage.getByRole('option', { name: 'SFTP', exact: true }).click();
      for (const basic of ['host', 'port', 'username', 'password', 'root']) expect(await on(basic).isVisible(), basic).toBe(true);
      expect(await on('connectTimeoutSeconds').isVisible()).toBe(false);
      await adminPage.getByRole('button', { name: /^Advanced settings \(\d+\)$/ }).click();
      await expect.poll(() => on('connectTimeoutSeconds').isVisible()).toBe(true);
      expect(await on('keepaliveSeconds').isVisible()).toBe(true);

      await adminPage.goto(`${server.url}/adapters/${ids.postgres}`);
      await on('user').waitFor();
      expect(await on('restoreClean').isVisible()).toBe(false);
      expect(await adminPage.getByRole('group', { name: /ssh/i }).isVisible().catch(() => false)).toBe(false);
      await adminPage.getByRole('button', { name: /^Advanced settings/ }).click();
      await expect.poll(() => on('restoreClean').isVisible()).toBe(true);
      await captureHere(adminPage, SHOTS, 'adapter-form-advanced', findings);
    } finally {
      await adminContext.close();
    }
  });

  it('met the page rules: axe finds nothing serious', () => {
    expect(describeViolations(findings)).toEqual([]);
    expect(findings.length).toBeGreaterThanOrEqual(2);
  });
});
