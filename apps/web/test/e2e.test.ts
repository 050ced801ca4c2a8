// End to end: the built web app in Debian's Chromium (playwright-core) against the assembled server on the embedded
// database. Everything is done through the forms: first-run setup, sign-in, a PostgreSQL source, a local and an SFTP
// destination, a job; run it and watch it live, history, single-use download, restore, an API key, sign-out.
// Along the way: screenshots of the main pages (desktop/phone, light/dark), an axe-core scan of each, and checks
// that every API call goes through the typed client and that no typed secret comes back in any answer.
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { startServer, type ServerHandle } from '@holdfast/server';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AxeViolation, CHROMIUM_ARGS, ensureWebBuilt, findChromium, seriousViolations, WEB_ROOT } from './support/browser.js';
import { describeViolations } from './support/pages.js';

const run = promisify(execFile);
const SHOTS = fileURLToPath(new URL('../test-results/screenshots', import.meta.url));
const SSHD = JSON.parse(await readFile('/tmp/holdfast-test-services/sshd/sshd.json', 'utf8')) as { host: string; port: number; user: string; password: string; home: string };

const ADMIN = { name: 'Ada Admin', email: 'ada@example.test', password: `pw-${Date.now()}-correct horse` };
const STAMP = `${Date.now()}`;
const DATABASE = `web_e2e_${STAMP}`;
const RESTORED = `${DATABASE}_restored`;

const chromiumFound = await findChromium();
if ('reason' in chromiumFound) console.warn(`@holdfast/web e2e skipped: ${chromiumFound.reason}`);
const suite = 'reason' in chromiumFound ? describe.skip : describe;

async function psql(database: string, sql: string): Promise<string> {
  const { stdout } = await run('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', database, '-Atc', sql]);
  return stdout.trim();
}

/** Every row of the test table in one digest, to compare the restored database with the original. */
function tableDigest(database: string): Promise<string> {
  return psql(database, "select count(*) || ':' || md5(string_agg(id || '=' || note, ',' order by id)) from items");
}

interface Seen {
  url: URL;
  method: string;
  resourceType: string;
  viaClient: boolean;
}

suite(`admin web app in Chromium${'reason' in chromiumFound ? ` (skipped: ${chromiumFound.reason})` : ''}`, () => {
  let server: ServerHandle;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let localDir: string;
  let sftpRoot: string;
  let dataDir: string;
  const requests: Seen[] = [];
  const bodies: Array<{ url: string; text: string }> = [];
  const pending: Promise<unknown>[] = [];
  const cspErrors: string[] = [];
  const violations: Array<{ page: string; scheme: string; violations: AxeViolation[] }> = [];
  const ids: Record<string, string> = {};
  let rawKey = '';

  beforeAll(async () => {
    ensureWebBuilt();
    await psql('postgres', `CREATE DATABASE ${DATABASE}`);
    await psql(DATABASE, "CREATE TABLE items (id int primary key, note text); INSERT INTO items SELECT g, 'note ' || g FROM generate_series(1, 5000) g");
    dataDir = await mkdtemp(join(tmpdir(), 'holdfast-web-data-'));
    localDir = await mkdtemp(join(tmpdir(), 'holdfast-web-local-'));
    sftpRoot = `web-e2e-${STAMP}`;
    await run('install', ['-d', '-o', SSHD.user, '-g', SSHD.user, join(SSHD.home, sftpRoot)]);
    server = await startServer({
      env: { PORT: '0', HOLDFAST_DATA_DIR: dataDir, HOLDFAST_LOCAL_ROOTS: tmpdir(), HOLDFAST_WEB_DIR: WEB_ROOT, LOG_LEVEL: 'silent' },
      host: '127.0.0.1',
    });
    browser = await chromium.launch({ executablePath: (chromiumFound as { path: string }).path, args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) cspErrors.push(message.text());
    });
    page.on('request', (request) => {
      requests.push({
        url: new URL(request.url()),
        method: request.method(),
        resourceType: request.resourceType(),
        viaClient: request.headers()['x-holdfast-web'] === '1',
      });
    });
    page.on('response', (response) => {
      const url = new URL(response.url());
      const type = response.headers()['content-type'] ?? '';
      if (!url.pathname.startsWith('/api/') || url.pathname.endsWith('/events') || url.pathname === '/api/storage/public-download') return;
      if (!type.includes('json')) return;
      pending.push(response.text().then((text) => bodies.push({ url: `${response.request().method()} ${url.pathname}`, text }), () => undefined));
    });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(localDir, { recursive: true, force: true });
    await rm(join(SSHD.home, sftpRoot ?? 'none'), { recursive: true, force: true });
    await psql('postgres', `DROP DATABASE IF EXISTS ${DATABASE}`).catch(() => undefined);
    await psql('postgres', `DROP DATABASE IF EXISTS ${RESTORED}`).catch(() => undefined);
  });

  afterEach(async (context) => {
    // A failed step leaves a picture of where it stopped.
    if (context.task.result?.state === 'fail') await page?.screenshot({ path: join(SHOTS, `failed-${context.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
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

  /** Screenshots at desktop and phone width in light and dark, plus an axe scan in each scheme. */
  const capture = async (name: string, path: string) => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [label, size] of [['desktop', { width: 1440, height: 900 }], ['phone', { width: 390, height: 844 }]] as const) {
        await page.setViewportSize(size);
        await go(path);
        await page.screenshot({ path: join(SHOTS, `${name}-${label}-${scheme}.png`), fullPage: true });
        if (label === 'desktop') violations.push({ page: name, scheme, violations: await seriousViolations(page) });
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1440, height: 900 });
  };

  it('serves the app at / with SPA fallback, caching headers and a CSP, and keeps /api answers JSON', async () => {
    const shell = await fetch(`${server.url}/jobs/some-client-route`);
    expect(shell.status).toBe(200);
    expect(shell.headers.get('cache-control')).toBe('no-cache');
    expect(shell.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await shell.text();
    const asset = html.match(/\/assets\/index-[^"]+\.js/)?.[0];
    expect(asset).toBeDefined();
    const script = await fetch(`${server.url}${asset}`);
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(`${server.url}/assets/missing-deadbeef.js`)).status).toBe(404);
    const api = await fetch(`${server.url}/api/no-such-route`);
    expect(api.status).toBe(404);
    expect(await api.json()).toEqual({ error: expect.any(String) });
  });

  it('keeps what the first page loads (entry chunk and its preloads) under 500 kB gzip', async () => {
    const html = await readFile(join(WEB_ROOT, 'index.html'), 'utf8');
    const eager = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)].map((match) => match[1]!);
    expect(eager.length).toBeGreaterThanOrEqual(1);
    let gzipped = 0;
    for (const file of eager) gzipped += gzipSync(await readFile(join(WEB_ROOT, file))).length;
    expect(gzipped).toBeLessThan(500 * 1024);
    // The pages are their own chunks (code-split routes), so the entry cannot hold them.
    const chunks = await readdir(join(WEB_ROOT, 'assets'));
    expect(chunks.filter((name) => /^(DashboardPage|JobEditPage|StoragePage)-.*\.js$/.test(name))).toHaveLength(3);
  });

  it('first-run setup, sign-out and sign-in', async () => {
    await mkdir(SHOTS, { recursive: true });
    await go('/');
    await page.waitForURL(/\/setup$/);
    await capture('setup', '/setup');
    await page.getByLabel(/^Name/).fill(ADMIN.name);
    await page.getByLabel(/^Email/).fill(ADMIN.email);
    await page.getByLabel(/^Password/).fill('short');
    await page.getByLabel(/^Repeat password/).fill('short');
    await page.getByRole('button', { name: 'Create administrator' }).click();
    await expect.poll(() => page.getByText('Use at least 12 characters').isVisible()).toBe(true);
    await page.getByLabel(/^Password/).fill(ADMIN.password);
    await page.getByLabel(/^Repeat password/).fill(ADMIN.password);
    await page.getByRole('button', { name: 'Create administrator' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();

    await page.getByTestId('sign-out').click();
    await page.waitForURL(/\/sign-in/);
    await capture('sign-in', '/sign-in');
    await page.getByLabel(/^Email/).fill(ADMIN.email);
    await page.getByLabel(/^Password/).fill('wrong password, surely');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Sign-in failed' }).waitFor();
    await page.getByLabel(/^Password/).fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();

    // This suite sends many requests from one address; lift the limits the way an operator would (API, same session).
    const cookie = (await context.cookies()).map((entry) => `${entry.name}=${entry.value}`).join('; ');
    const sessionInfo = (await (await fetch(`${server.url}/api/auth/session`, { headers: { cookie } })).json()) as { csrfToken: string };
    const lifted = await fetch(`${server.url}/api/settings`, {
      method: 'PUT',
      headers: { cookie, 'x-csrf-token': sessionInfo.csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ authPoints: 10_000, apiPoints: 100_000, mutationPoints: 100_000 }),
    });
    expect(lifted.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 5_500));
  });

  it('creates a PostgreSQL source, a local and an SFTP destination through the schema forms', async () => {
    await go('/sources');
    await page.getByText('No sources yet.').waitFor();
    await page.getByRole('link', { name: 'Add source' }).click();
    await choose('adapterId', 'PostgreSQL');
    await field('name').fill('orders db');
    // Schema validation: a required field left empty is named before anything is sent.
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.locator('[data-field="user"]').getAttribute('aria-invalid')).toBe('true');
    await field('user').fill('postgres');
    await page.getByRole('button', { name: 'Test connection' }).click();
    await expect(page.getByTestId('test-result').textContent()).resolves.toBeTruthy();
    await page.getByTestId('test-result').filter({ hasText: 'Connection works' }).waitFor();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('link', { name: 'orders db' }).waitFor();
    ids.source = (await page.getByRole('link', { name: 'orders db' }).getAttribute('href'))!.split('/').pop()!;

    await go('/adapters/new/storage');
    await choose('adapterId', 'Local directory');
    await field('name').fill('local disk');
    await field('path').fill(localDir);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('link', { name: 'local disk' }).waitFor();

    await go('/adapters/new/storage');
    await choose('adapterId', 'SFTP');
    await field('name').fill('offsite sftp');
    await field('host').fill(SSHD.host);
    await field('port').fill(String(SSHD.port));
    await field('username').fill(SSHD.user);
    await field('password').fill(SSHD.password);
    await field('root').fill(`/home/${SSHD.user}/${sftpRoot}`);
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByTestId('test-result').filter({ hasText: 'Connection works' }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('link', { name: 'offsite sftp' }).waitFor();

    // Editing shows the stored secret as "stored" (never its value) and keeps it when left empty.
    await page.getByRole('link', { name: 'offsite sftp' }).click();
    await expect.poll(() => field('password').getAttribute('placeholder')).toMatch(/stored/);
    expect(await field('password').inputValue()).toBe('');
    ids.sftp = page.url().split('/').pop()!;
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByTestId('test-result').filter({ hasText: 'Connection works' }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('link', { name: 'offsite sftp' }).waitFor();
    await capture('destinations', '/destinations');
    await capture('destination-edit', `/adapters/${ids.sftp}`);
    await capture('sources', '/sources');
  });

  it('creates a job, runs it and watches it reach Success live', async () => {
    await go('/jobs/new');
    // New jobs start on ZSTD with worker threads: the fastest codec with an output no larger (docs/benchmarks.md).
    expect(await field('job-compression').inputValue()).toBe('ZSTD');
    await field('job-name').fill('orders nightly');
    await choose('job-source', 'orders db');
    await field('job-databases').fill(DATABASE);
    await field('job-databases').press('Enter');
    await choose('job-add-destination', 'local disk');
    await choose('job-add-destination', 'offsite sftp');
    await page.getByRole('button', { name: 'Save job' }).click();
    await page.getByRole('link', { name: 'orders nightly' }).waitFor();
    await capture('jobs', '/jobs');
    await page.getByRole('link', { name: 'orders nightly' }).click();
    await page.waitForURL(/\/jobs\/[^/]+$/);
    ids.job = page.url().split('/').pop()!;

    await page.getByTestId('run-now').click();
    await page.waitForURL(/\/runs\//);
    ids.run = page.url().split('/').pop()!;
    // The status flips to Success without a reload: the page follows the execution's event stream.
    await page.getByTestId('run-status').filter({ hasText: 'Success' }).waitFor({ timeout: 180_000 });
    expect(requests.some((request) => request.url.pathname === `/api/executions/${ids.run}/events` && request.viaClient)).toBe(true);
    await expect.poll(() => page.getByTestId('run-log').textContent()).toMatch(/\w+/);
    await capture('run', `/runs/${ids.run}`);
    await capture('job-edit', `/jobs/${ids.job}`);
  });

  it('finds the run in history', async () => {
    await go('/history');
    const row = page.getByTestId('history-row').filter({ hasText: 'orders nightly' });
    await row.first().waitFor();
    expect(await row.first().textContent()).toContain('Success');
    await capture('history', '/history');
    await capture('dashboard', '/');
  });

  it('downloads the backup through a single-use link and restores it into a new database', async () => {
    const files = (await readdir(localDir, { recursive: true })).map(String);
    const backupName = files.find((name) => !name.endsWith('.meta.json'))!;
    expect(backupName).toBeDefined();
    const onDisk = createHash('sha256').update(await readFile(join(localDir, backupName))).digest('hex');

    await go('/storage');
    await choose('storage-select', 'local disk');
    await page.getByTestId('storage-row').first().waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download').first().click()]);
    const saved = join(dataDir, 'downloaded');
    await download.saveAs(saved);
    expect(createHash('sha256').update(await readFile(saved)).digest('hex')).toBe(onDisk);
    // The link was single-use: asking again with the same token is refused.
    const again = await fetch(download.url());
    expect(again.status).toBeGreaterThanOrEqual(400);
    await capture('storage', '/storage');

    await go('/storage');
    await choose('storage-select', 'offsite sftp');
    await page.getByTestId('storage-row').first().waitFor();
    await page.getByTestId('restore').first().click();
    await choose('restore-target', 'orders db');
    await field('restore-database').fill(RESTORED);
    await page.getByTestId('restore-start').click();
    await page.waitForURL(/\/runs\//);
    await page.getByTestId('run-status').filter({ hasText: 'Success' }).waitFor({ timeout: 180_000 });
    expect(await tableDigest(RESTORED)).toBe(await tableDigest(DATABASE));
  });

  it('creates an API key and shows the raw key exactly once', async () => {
    await go('/api-keys');
    await field('key-name').fill('ci pipeline');
    await field('key-permissions').click();
    await page.getByRole('option', { name: 'jobs:execute', exact: true }).click();
    await page.getByRole('option', { name: 'history:read', exact: true }).click();
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Create key' }).click();
    rawKey = (await page.getByTestId('raw-key').textContent())!.trim();
    expect(rawKey).toMatch(/^svc_key_[0-9a-f]{40}$/);
    await go('/api-keys');
    await page.getByRole('cell', { name: 'ci pipeline', exact: true }).waitFor();
    expect(await page.getByTestId('raw-key').count()).toBe(0);
    expect(await page.content()).not.toContain(rawKey);
    await capture('api-keys', '/api-keys');
    await capture('users', '/users');
    await capture('settings', '/settings');
    await capture('audit', '/audit');
    await capture('profile', '/profile');
    await capture('channels', '/channels');
  });

  it('signs out', async () => {
    await go('/');
    await page.getByTestId('sign-out').click();
    await page.waitForURL(/\/sign-in/);
    await go('/jobs');
    await page.waitForURL(/\/sign-in\?next=%2Fjobs/);
  });

  it('met the page rules: axe finds nothing serious, only the typed client calls the API, no secret comes back', async () => {
    await Promise.all(pending);
    expect(describeViolations(violations)).toEqual([]);
    expect(violations.length).toBeGreaterThanOrEqual(14 * 2);
    expect(cspErrors).toEqual([]);

    const origin = new URL(server.url).origin;
    const apiCalls = requests.filter((request) => request.url.pathname.startsWith('/api/'));
    expect(apiCalls.length).toBeGreaterThan(50);
    // Everything is same-origin; API calls carry the typed client's marker, except the browser's own download of
    // the single-use link (a navigation, by design: the file streams to disk instead of through page memory).
    expect(requests.filter((request) => request.url.origin !== origin && request.url.protocol.startsWith('http')).map((r) => r.url.href)).toEqual([]);
    const outsideClient = apiCalls.filter((request) => !request.viaClient && request.url.pathname !== '/api/storage/public-download');
    expect(outsideClient.map((request) => `${request.method} ${request.url.pathname} (${request.resourceType})`)).toEqual([]);
    expect(requests.filter((request) => ['fetch', 'xhr', 'eventsource'].includes(request.resourceType) && !request.url.pathname.startsWith('/api/'))).toEqual([]);

    expect(bodies.length).toBeGreaterThan(50);
    const secrets = [ADMIN.password, SSHD.password];
    for (const body of bodies) for (const secret of secrets) expect(body.text.includes(secret), `${body.url} echoes a secret`).toBe(false);
    // The raw key comes back once: in the answer that created it, nowhere else.
    const withKey = bodies.filter((body) => body.text.includes(rawKey)).map((body) => body.url);
    expect(withKey).toEqual(['POST /api/api-keys']);
  });
});
