// End to end: seekable archives in the admin web app, in Debian's Chromium (playwright-core) against the assembled
// server on the embedded database. A directory source over a temp folder and a local destination are set up through
// the API; the job's backup format and incremental chain are set through the job editor (BROTLI + Seekable shows the
// server's refusal, and the saved values load back). The job runs twice (a full backup, then an incremental one);
// the storage page browses the newest archive (chain position, which backup holds each file), restores one selected
// file into a folder, and the restored bytes equal the original. Screenshots and axe scans of the new views, and the
// page rules of e2e.test.ts: API calls only through the typed client.
import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type ServerHandle } from '@holdfast/server';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, ensureWebBuilt, findChromium, WEB_ROOT } from './support/browser.js';
import { captureHere, describeViolations, recordTraffic, type AxeFinding, type SeenBody, type SeenRequest } from './support/pages.js';

const SHOTS = fileURLToPath(new URL('../test-results/screenshots', import.meta.url));
const STAMP = `${Date.now()}`;
const ADMIN = { email: 'archive-admin@example.test', password: `pw-${STAMP}-seekable harbour` };
/** The file restored on its own: its bytes change between the runs, so the incremental backup holds the new ones. */
const NOTES_V2 = `notes, second edition ${STAMP}\n${'line of changed text\n'.repeat(200)}`;

const chromiumFound = await findChromium();
if ('reason' in chromiumFound) console.warn(`@holdfast/web seekable archive e2e skipped: ${chromiumFound.reason}`);
const suite = 'reason' in chromiumFound ? describe.skip : describe;

suite(`seekable archives in Chromium${'reason' in chromiumFound ? ` (skipped: ${chromiumFound.reason})` : ''}`, () => {
  let server: ServerHandle;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let sourceDir: string;
  let localDir: string;
  let restoreDir: string;
  const requests: SeenRequest[] = [];
  const bodies: SeenBody[] = [];
  const pending: Promise<unknown>[] = [];
  const findings: AxeFinding[] = [];
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    ensureWebBuilt();
    await mkdir(SHOTS, { recursive: true });
    dataDir = await mkdtemp(join(tmpdir(), 'holdfast-web-archive-'));
    sourceDir = await mkdtemp(join(tmpdir(), 'holdfast-web-archive-src-'));
    localDir = await mkdtemp(join(tmpdir(), 'holdfast-web-archive-local-'));
    restoreDir = join(await mkdtemp(join(tmpdir(), 'holdfast-web-archive-restore-')), 'picked');
    await mkdir(join(sourceDir, 'docs'));
    await writeFile(join(sourceDir, 'docs', 'notes.txt'), `notes, first edition ${STAMP}\n`);
    await writeFile(join(sourceDir, 'docs', 'todo.md'), '- back up\n- restore one file\n');
    await writeFile(join(sourceDir, 'photo.bin'), Buffer.alloc(64 * 1024, 7));
    server = await startServer({
      env: {
        PORT: '0',
        HOLDFAST_DATA_DIR: dataDir,
        HOLDFAST_LOCAL_ROOTS: tmpdir(),
        HOLDFAST_WEB_DIR: WEB_ROOT,
        LOG_LEVEL: 'silent',
        HOLDFAST_ADMIN_EMAIL: ADMIN.email,
        HOLDFAST_ADMIN_PASSWORD: ADMIN.password,
      },
      host: '127.0.0.1',
    });
    browser = await chromium.launch({ executablePath: (chromiumFound as { path: string }).path, args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    recordTraffic(page, requests, bodies, pending);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    for (const dir of [dataDir, sourceDir, localDir, restoreDir && join(restoreDir, '..')]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  afterEach(async (test) => {
    if (test.task.result?.state === 'fail') await page?.screenshot({ path: join(SHOTS, `failed-archive-${test.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
  });

  const go = async (path: string) => {
    await page.goto(`${server.url}${path}`);
    await page.waitForLoadState('networkidle');
  };
  const field = (name: string) => page.locator(`[data-field="${name}"]`);
  const choose = async (name: string, option: string) => {
    await field(name).click();
    await page.getByRole('option', { name: option, exact: true }).click();
  };
  /** The admin's session as a cookie header, for set-up beside the page and for reading back what a form stored. */
  const adminCall = async (method: string, path: string, body?: unknown) => {
    const cookie = (await context.cookies()).map((entry) => `${entry.name}=${entry.value}`).join('; ');
    const session = (await (await fetch(`${server.url}/api/auth/session`, { headers: { cookie } })).json()) as { csrfToken: string };
    const answer = await fetch(`${server.url}${path}`, {
      method,
      headers: { cookie, 'x-csrf-token': session.csrfToken, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: answer.status, body: (await answer.json().catch(() => null)) as any };
  };
  /** Runs the job from its page ("Run now") and waits for the run page to show Success. */
  const runJobNow = async () => {
    await go(`/jobs/${ids.job}`);
    await page.getByTestId('run-now').click();
    await page.waitForURL(/\/runs\//);
    await page.getByTestId('run-status').filter({ hasText: 'Success' }).waitFor({ timeout: 180_000 });
  };

  it('signs in; a directory source and a local destination exist to refer to', async () => {
    await go('/sign-in');
    await page.getByLabel(/^Email/).fill(ADMIN.email);
    await page.getByLabel(/^Password/).fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    expect((await adminCall('PUT', '/api/settings', { authPoints: 10_000, apiPoints: 100_000, mutationPoints: 100_000 })).status).toBe(200);
    const source = await adminCall('POST', '/api/adapters', { type: 'database', adapterId: 'directory', name: 'project files', config: { paths: [sourceDir] } });
    expect(source.status).toBe(201);
    const destination = await adminCall('POST', '/api/adapters', { type: 'storage', adapterId: 'local', name: 'local disk', config: { path: localDir } });
    expect(destination.status).toBe(201);
    ids.storage = destination.body.id;
    // The rate limits apply within 5 s.
    await new Promise((resolve) => setTimeout(resolve, 5_500));
  });

  it('job editor: Seekable refuses BROTLI with the server message; the format and fullEveryRuns are saved and load back', async () => {
    await go('/jobs/new');
    await field('job-name').fill('project seekable');
    // The format is offered once the chosen source can write a seekable archive.
    expect(await page.getByRole('radio', { name: 'Seekable archive' }).count()).toBe(0);
    await choose('job-source', 'project files');
    await choose('job-add-destination', 'local disk');
    await choose('job-compression', 'BROTLI');
    await page.getByRole('radio', { name: 'Seekable archive' }).check();
    // BROTLI is no longer offered, the kept choice is marked, and the server's own refusal is shown on save.
    await field('job-compression').click();
    expect(await page.getByRole('option', { name: 'BROTLI', exact: true }).getAttribute('data-combobox-disabled')).toBe('true');
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Save job' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'Could not save the job' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('not BROTLI');

    await choose('job-compression', 'ZSTD');
    await page.getByTestId('job-incremental-chain').getByText('Both empty: every run is a full backup.').waitFor();
    await field('job-full-every-runs').fill('5');
    await captureHere(page, SHOTS, 'job-edit-seekable', findings);
    await page.getByRole('button', { name: 'Save job' }).click();
    await page.waitForURL(/\/jobs$/);
    const listed = (await adminCall('GET', '/api/jobs')).body as Array<{ id: string; name: string }>;
    ids.job = listed.find((job) => job.name === 'project seekable')!.id;
    const job = (await adminCall('GET', `/api/jobs/${ids.job}`)).body as { archiveFormat: string; fullEveryRuns: number | null; fullEveryDays: number | null; compression: string };
    expect(job).toMatchObject({ archiveFormat: 'SEEKABLE', fullEveryRuns: 5, fullEveryDays: null, compression: 'ZSTD' });

    await go(`/jobs/${ids.job}`);
    expect(await page.getByRole('radio', { name: 'Seekable archive' }).isChecked()).toBe(true);
    expect(await field('job-full-every-runs').inputValue()).toBe('5');
    expect(await field('job-full-every-days').inputValue()).toBe('');
  });

  it('runs the job twice: a full backup, then an incremental one after a file changed', async () => {
    await runJobNow();
    await writeFile(join(sourceDir, 'docs', 'notes.txt'), NOTES_V2);
    await runJobNow();
    const files = (await adminCall('GET', `/api/storage/${ids.storage}/files`)).body as Array<{ path: string; createdAt: string | null; modifiedAt: string }>;
    const archives = files.filter((file) => file.path.endsWith('.hfa'));
    expect(archives).toHaveLength(2);
    const byAge = [...archives].sort((a, b) => (a.createdAt ?? a.modifiedAt).localeCompare(b.createdAt ?? b.modifiedAt));
    ids.fullArchive = byAge[0]!.path;
    ids.newestArchive = byAge[1]!.path;
  });

  it('browses the newest archive on the storage page and restores one selected file into a folder', async () => {
    await go(`/storage?storage=${ids.storage}`);
    const row = page.getByTestId('storage-row').filter({ hasText: ids.newestArchive! });
    await row.getByTestId('browse').click();
    const drawer = page.getByRole('dialog');
    await drawer.getByTestId('archive-chain').waitFor();
    expect(await drawer.getByTestId('archive-chain-position').textContent()).toBe('incremental 1');
    const required = (await drawer.getByTestId('archive-required').getByRole('listitem').allTextContents()).map((text) => text.trim());
    expect(required).toEqual([basename(ids.fullArchive!), `${basename(ids.newestArchive!)} (this backup)`]);

    // The changed file is held by this backup; an unchanged one by the full backup the chain started with.
    const entry = (suffix: string) => drawer.locator(`[data-testid="archive-entry"][data-path$="${suffix}"]`);
    expect(await entry('/docs/notes.txt').textContent()).toContain('this backup');
    expect(await entry('/docs/todo.md').textContent()).toContain(basename(ids.fullArchive!));

    await field('archive-filter').fill('notes');
    await expect.poll(() => drawer.getByTestId('archive-entry').count()).toBe(1);
    const notesPath = (await entry('/docs/notes.txt').getAttribute('data-path'))!;
    await entry('/docs/notes.txt').getByRole('checkbox').check();
    expect(await drawer.getByTestId('archive-selection-count').textContent()).toBe('1 selected');
    await field('archive-restore-folder').fill(restoreDir);
    await captureHere(page, SHOTS, 'storage-archive-browser', findings, '[role="dialog"]');
    await drawer.getByTestId('archive-restore-start').click();
    await page.waitForURL(/\/runs\//);
    await page.getByTestId('run-status').filter({ hasText: 'Success' }).waitFor({ timeout: 180_000 });

    expect(await readFile(join(restoreDir, notesPath), 'utf8')).toBe(await readFile(join(sourceDir, 'docs', 'notes.txt'), 'utf8'));
    expect(await readFile(join(restoreDir, notesPath), 'utf8')).toBe(NOTES_V2);
    // Only the selection was restored.
    expect(existsSync(join(restoreDir, notesPath.replace(/notes\.txt$/, 'todo.md')))).toBe(false);
    expect(existsSync(join(restoreDir, notesPath.split('/')[0]!, 'photo.bin'))).toBe(false);
    const archiveCall = requests.find((request) => request.url.pathname === `/api/storage/${ids.storage}/archive`);
    expect(archiveCall?.viaClient).toBe(true);
  });

  it('met the page rules: axe finds nothing serious, only the typed client calls the API', async () => {
    await Promise.all(pending);
    expect(describeViolations(findings)).toEqual([]);
    expect(findings.length).toBe(2 * 2);
    const origin = new URL(server.url).origin;
    const apiCalls = requests.filter((request) => request.url.pathname.startsWith('/api/'));
    expect(requests.filter((request) => request.url.origin !== origin && request.url.protocol.startsWith('http')).map((r) => r.url.href)).toEqual([]);
    expect(apiCalls.filter((request) => !request.viaClient).map((request) => `${request.method} ${request.url.pathname} (${request.resourceType})`)).toEqual([]);
    for (const body of bodies) expect(body.text.includes(ADMIN.password), `${body.url} echoes the password`).toBe(false);
  });
});
