// End to end, issue 47 (the app as a new user meets it): the built web app in Debian's Chromium against the assembled
// server on the embedded database, with three users: the administrator, a read-only user (every read permission but
// destinations:read and audit:read) and an operator scoped to one job (and one destination's files).
// - Permission-aware screens: menus, buttons and pages follow /api/auth/session; a denied page names the permission;
//   the storage page works with storage:read alone.
// - Truthful status: no success rate without runs, "not checked yet" until a check and a check on save, the
//   calendar by outcome with a legend and opened on today, the live run view's ticking duration, readable stage,
//   bytes read and stored apart, a cancelled run reading as cancelled, badges never cut.
// - Within its own limits: precompressed assets with the right headers, no retry of a 4xx, one session read per
//   tab, 30 dashboard reloads and every page at the default GET limit without a 429 (scripted clients still get
//   theirs), every system setting editable, readable task names, events that go nowhere flagged.
// - Numbers: JavaScript + CSS of a cold dashboard load and the time to its content (printed), phone-width actions,
//   page titles, named close buttons, axe in light and dark.
import 'reflect-metadata';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type ServerHandle } from '@holdfast/server';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, ensureWebBuilt, findChromium, WEB_ROOT } from './support/browser.js';
import { captureHere, describeViolations, type AxeFinding } from './support/pages.js';
import { signInCaller, useSessionIn, waitForFinal, type SessionCaller } from './support/sessions.js';

const SHOTS = fileURLToPath(new URL('../test-results/screenshots', import.meta.url));
const STAMP = `${Date.now()}`;
const ADMIN = { email: 'everyday-admin@example.test', password: `pw-${STAMP}-quiet harbour` };
const READER = { email: 'reader@example.test', password: `pw-${STAMP}-reader only` };
const OPERATOR = { email: 'operator@example.test', password: `pw-${STAMP}-one job only` };

const chromiumFound = await findChromium();
if ('reason' in chromiumFound) console.warn(`@holdfast/web everyday-use e2e skipped: ${chromiumFound.reason}`);
const suite = 'reason' in chromiumFound ? describe.skip : describe;

function isoToday(): string {
  return new Date().toISOString().slice(0, 10);
}

suite(`everyday use in Chromium (issue 47)${'reason' in chromiumFound ? ` (skipped: ${chromiumFound.reason})` : ''}`, () => {
  let server: ServerHandle;
  let browser: Browser;
  let dataDir: string;
  let workDir: string;
  let admin: SessionCaller;
  let reader: SessionCaller;
  let operator: SessionCaller;
  const findings: AxeFinding[] = [];
  const ids: Record<string, string> = {};
  const contexts: BrowserContext[] = [];

  /** A fresh browser context signed in as `caller` (its own cache: a cold load). */
  const pageAs = async (caller: SessionCaller, viewport = { width: 1440, height: 900 }): Promise<Page> => {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    await useSessionIn(context, server.url, caller);
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('dialog', (dialog) => void dialog.accept());
    return page;
  };
  const go = async (page: Page, path: string) => {
    await page.goto(`${server.url}${path}`);
    await page.waitForLoadState('networkidle');
  };

  beforeAll(async () => {
    ensureWebBuilt();
    await mkdir(SHOTS, { recursive: true });
    dataDir = await mkdtemp(join(tmpdir(), 'holdfast-web-everyday-'));
    workDir = await mkdtemp(join(tmpdir(), 'holdfast-web-everyday-files-'));
    server = await startServer({
      env: { PORT: '0', HOLDFAST_DATA_DIR: dataDir, HOLDFAST_LOCAL_ROOTS: tmpdir(), HOLDFAST_WEB_DIR: WEB_ROOT, LOG_LEVEL: 'silent', HOLDFAST_ADMIN_EMAIL: ADMIN.email, HOLDFAST_ADMIN_PASSWORD: ADMIN.password },
      host: '127.0.0.1',
    });
    browser = await chromium.launch({ executablePath: (chromiumFound as { path: string }).path, args: CHROMIUM_ARGS });
    admin = await signInCaller(server.url, ADMIN.email, ADMIN.password);
    // Sign-ins and changes are not what this file measures. The GET limit stays at 100 per IP, over a ten-minute
    // window instead of one: this shared machine may need more than a minute for the reloads below, and a longer
    // window only makes a per-IP limit stricter (the browser budget is 5 x 100 per window).
    expect((await admin.call('PUT', '/api/settings', { authPoints: 1_000, mutationPoints: 1_000, apiDuration: 600 })).status).toBe(200);

    const files = join(workDir, 'files');
    await mkdir(files);
    // Text that compresses well: bytes read and bytes stored differ a lot.
    await writeFile(join(files, 'notes.txt'), 'the same line of notes, again and again\n'.repeat(50_000));
    const vanishing = join(workDir, 'vanishing');
    await mkdir(vanishing);
    await writeFile(join(vanishing, 'a.txt'), 'soon gone');
    const store = join(workDir, 'store');
    await mkdir(store);
    const made = async (path: string, body: unknown) => {
      const answer = await admin.call('POST', path, body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body.id as string;
    };
    ids.source = await made('/api/adapters', { type: 'database', adapterId: 'directory', name: 'project files', config: { paths: [files] } });
    ids.vanishingSource = await made('/api/adapters', { type: 'database', adapterId: 'directory', name: 'vanishing files', config: { paths: [vanishing] } });
    ids.destination = await made('/api/adapters', { type: 'storage', adapterId: 'local', name: 'local store', config: { path: store } });
    const bulky = join(workDir, 'bulky');
    await mkdir(bulky);
    // Random bytes at BROTLI quality 11 (under 1 MB/s on one core): a run of tens of seconds, long enough to watch a
    // queued run wait behind it and its duration tick. GZIP 9 (160 MiB at about 30 MB/s) once finished before the
    // queued run's page had loaded in CI.
    await writeFile(join(bulky, 'random.bin'), randomBytes(16 * 1024 * 1024));
    ids.bulkySource = await made('/api/adapters', { type: 'database', adapterId: 'directory', name: 'bulky files', config: { paths: [bulky] } });
    const job = (name: string, sourceId: string, configId: string) => made('/api/jobs', { name, sourceId, schedule: '0 3 * * *', compression: 'GZIP', destinations: [{ configId }] });
    ids.job = await job('Nightly files', ids.source, ids.destination);
    ids.failingJob = await job('Vanishing files', ids.vanishingSource, ids.destination);
    ids.slowJob = await made('/api/jobs', { name: 'Slow archive', sourceId: ids.bulkySource, schedule: '0 3 * * *', compression: 'BROTLI', compressionLevel: 11, destinations: [{ configId: ids.destination }] });

    const everyRead = ((await admin.call('GET', '/api/permissions')).body as Array<{ name: string }> | { permissions: Array<{ name: string }> });
    const catalog = (Array.isArray(everyRead) ? everyRead : everyRead.permissions).map((entry) => entry.name);
    const reads = catalog.filter((name) => name.endsWith(':read') && name !== 'destinations:read' && name !== 'audit:read');
    expect(reads).toContain('storage:read');
    const readOnly = await made('/api/groups', { name: 'Read only', permissions: reads });
    const scoped = await made('/api/groups', {
      name: 'Nightly operators',
      permissions: [],
      grants: [
        { permission: 'jobs:read', resourceType: 'job', resourceIds: [ids.job] },
        { permission: 'jobs:execute', resourceType: 'job', resourceIds: [ids.job] },
        { permission: 'history:read', resourceType: 'job', resourceIds: [ids.job] },
        { permission: 'storage:read', resourceType: 'destination', resourceIds: [ids.destination] },
      ],
    });
    await made('/api/users', { name: 'Rita Reader', email: READER.email, password: READER.password, groupId: readOnly });
    await made('/api/users', { name: 'Otto Operator', email: OPERATOR.email, password: OPERATOR.password, groupId: scoped });
    reader = await signInCaller(server.url, READER.email, READER.password);
    operator = await signInCaller(server.url, OPERATOR.email, OPERATOR.password);
    // Settings are re-read within 5 s.
    await new Promise((resolve) => setTimeout(resolve, 5_500));
  }, 180_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(workDir, { recursive: true, force: true });
  });

  it('item 3: before any run the dashboard says so instead of a 0 % success rate; adapters read "not checked yet"', async () => {
    const page = await pageAs(admin);
    await go(page, '/');
    await expect.poll(() => page.getByTestId('stat-Success rate (30 days)').textContent()).toBe('No runs yet');
    await go(page, '/destinations');
    const row = page.getByRole('row').filter({ hasText: 'local store' });
    await expect.poll(() => row.locator('[data-status]').textContent()).toBe('Not checked yet');
  });

  it('item 3: saving a destination checks it: a missing folder reads OFFLINE at once, not ONLINE for 15 minutes', async () => {
    const gone = join(workDir, 'gone');
    await mkdir(gone);
    const id = (await admin.call('POST', '/api/adapters', { type: 'storage', adapterId: 'local', name: 'moved disk', config: { path: gone } })).body.id as string;
    await rm(gone, { recursive: true });
    const page = await pageAs(admin);
    await go(page, `/adapters/${id}`);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(`${server.url}/destinations`);
    const row = page.getByRole('row').filter({ hasText: 'moved disk' });
    await expect.poll(() => row.locator('[data-status]').textContent(), { timeout: 20_000 }).toBe('OFFLINE');
    expect((await admin.call('GET', `/api/adapters/${id}`)).body.lastHealthCheck).not.toBeNull();
    expect((await admin.call('DELETE', `/api/adapters/${id}`)).status).toBe(200);
  });

  it('item 3: the calendar colours a day with a failed run as failed, has a legend and tooltips, and opens on today', async () => {
    const good = await admin.call('POST', `/api/jobs/${ids.job}/run`, {});
    expect(await waitForFinal(admin, good.body.executionId)).toBe('Success');
    ids.goodRun = good.body.executionId;
    await rm(join(workDir, 'vanishing'), { recursive: true });
    const bad = await admin.call('POST', `/api/jobs/${ids.failingJob}/run`, {});
    expect(await waitForFinal(admin, bad.body.executionId)).toBe('Failed');

    const page = await pageAs(admin, { width: 390, height: 844 });
    await go(page, '/');
    const today = page.locator(`[data-testid="outcome-calendar"] rect[data-date="${isoToday()}"]`);
    await expect.poll(() => today.getAttribute('data-outcome')).toBe('failed');
    expect(await today.locator('title').textContent()).toMatch(/failed \(1 success, 1 failed\)/);
    expect(await page.getByTestId('calendar-legend').textContent()).toMatch(/Success.*Partial.*Failed.*No runs/);
    // Opened on today: scrolled to the right end on a phone.
    const scroll = await page.getByTestId('calendar-scroller').evaluate((element) => ({ left: element.scrollLeft, width: element.scrollWidth, client: element.clientWidth }));
    expect(scroll.width).toBeGreaterThan(scroll.client);
    expect(scroll.left + scroll.client).toBeGreaterThanOrEqual(scroll.width - 2);
    expect(await page.getByTestId('stat-Success rate (30 days)').textContent()).toBe('50%');
  });

  it('item 3: the finished run shows bytes read and bytes stored apart; badges are never cut', async () => {
    const page = await pageAs(admin);
    await go(page, `/runs/${ids.goodRun}`);
    const stored = (await admin.call('GET', `/api/executions/${ids.goodRun}`)).body.data.size as number;
    expect(stored).toBeGreaterThan(0);
    await expect.poll(() => page.getByTestId('run-bytes-stored').textContent()).toMatch(/^Stored: \d/);
    expect(await page.getByTestId('run-bytes-read').textContent()).toMatch(/^Read: /);
    await page.setViewportSize({ width: 390, height: 844 });
    for (const path of ['/history', '/jobs', '/']) {
      await go(page, path);
      const cut = await page.locator('.hf-status').evaluateAll((badges) =>
        badges.filter((badge) => {
          const label = badge.querySelector('.mantine-Badge-label') ?? badge;
          return label.scrollWidth > label.clientWidth + 1 || badge.scrollWidth > badge.clientWidth + 1;
        }).map((badge) => badge.textContent),
      );
      expect(cut, `cut badges on ${path}`).toEqual([]);
    }
  });

  it('item 3: the live run view ticks its duration and names its stage; a cancelled run reads as cancelled', async () => {
    const page = await pageAs(admin);
    await go(page, '/jobs');
    await page.getByRole('button', { name: 'Run now: Slow archive' }).click();
    await page.waitForURL(/\/runs\//);
    const running = new URL(page.url()).pathname.split('/').pop()!;
    // One run at a time (maxConcurrentJobs 1): the next one waits in the queue while the slow one runs. Its view
    // is the one watched: it stays live for as long as the slow run takes, and is cancelled from there.
    const queued = (await admin.call('POST', `/api/jobs/${ids.job}/run`, {})).body.executionId as string;
    // Not `go`: a live run view keeps its event stream open, so the network never idles while the slow run runs.
    await page.goto(`${server.url}/runs/${queued}`);
    await page.getByTestId('run-stage').waitFor();
    // Read from the API first, so a slow run that ended too soon fails here by name rather than as a wrong stage.
    expect((await admin.call('GET', `/api/executions/${running}`)).body.data.status).toBe('Running');
    expect((await admin.call('GET', `/api/executions/${queued}`)).body.data.status).toBe('Pending');
    await expect.poll(() => page.getByTestId('run-stage').textContent(), { timeout: 10_000 }).toBe('Stage: Waiting in the queue');
    const duration = page.getByTestId('run-duration');
    await expect.poll(() => duration.textContent(), { timeout: 15_000 }).toMatch(/Duration: [1-9]\d* s/);
    const first = await duration.textContent();
    await expect.poll(() => duration.textContent(), { timeout: 5_000 }).not.toBe(first);
    await captureHere(page, SHOTS, 'everyday-run-live', findings);
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByTestId('run-cancelled').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('run-status').textContent()).toBe('Cancelled');
    expect(await page.getByText('Run failed').count()).toBe(0);
    expect(await waitForFinal(admin, running, 180_000)).toBe('Success');
  });

  it('item 4: the administrator sees every menu and the Add and Run buttons', async () => {
    const page = await pageAs(admin);
    await go(page, '/jobs');
    await page.getByRole('link', { name: 'New job' }).waitFor();
    expect(await page.getByRole('button', { name: /^Run now: / }).count()).toBe(3);
    await go(page, '/sources');
    await page.getByRole('link', { name: 'Add source' }).waitFor();
    expect(await page.getByRole('navigation').getByRole('link', { name: 'Audit log' }).count()).toBe(1);
  });

  it('item 4: a read-only user sees no Add or Run buttons, the storage page works with storage:read, a denied page names its permission', async () => {
    const page = await pageAs(reader);
    const forbidden: string[] = [];
    page.on('response', (response) => {
      if (response.status() === 403) forbidden.push(`${response.request().method()} ${new URL(response.url()).pathname}`);
    });
    await go(page, '/jobs');
    await page.getByRole('link', { name: 'Nightly files' }).waitFor();
    expect(await page.getByRole('link', { name: 'New job' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Run now/ }).count()).toBe(0);
    await go(page, '/sources');
    await page.getByRole('link', { name: 'project files' }).waitFor();
    expect(await page.getByRole('link', { name: 'Add source' }).count()).toBe(0);
    const nav = page.getByRole('navigation');
    expect(await nav.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Destinations' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Storage' }).count()).toBe(1);
    await go(page, '/storage');
    await page.getByTestId('storage-row').first().waitFor();
    expect(await page.getByTestId('download').count()).toBe(0);
    expect(await page.getByText('Something went wrong').count()).toBe(0);
    await go(page, '/audit');
    expect(await page.getByTestId('permission-denied').textContent()).toContain('audit:read');
    await captureHere(page, SHOTS, 'everyday-denied', findings);
    await go(page, '/settings');
    await page.locator('[data-setting="apiPoints"]').waitFor();
    expect(await page.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
    expect(forbidden).toEqual([]);
  });

  it('item 4: an operator scoped to one job lands on it, can run only it, and is told what other pages need', async () => {
    const page = await pageAs(operator);
    await go(page, '/');
    await page.waitForURL(`${server.url}/jobs`);
    await page.getByRole('button', { name: 'Run now: Nightly files' }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'Slow archive' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'New job' }).count()).toBe(0);
    const navLinks = await page.getByRole('navigation').getByRole('link').allTextContents();
    expect(navLinks).toEqual(['Jobs', 'History', 'Storage']);
    await go(page, '/sources');
    expect(await page.getByTestId('permission-denied').textContent()).toContain('sources:read');
    await go(page, '/storage');
    await page.getByTestId('storage-row').first().waitFor();
  });

  it('item 2: static assets go out precompressed with the caching headers; index.html is revalidated', async () => {
    const html = await fetch(`${server.url}/`, { headers: { 'accept-encoding': 'br, gzip' } });
    expect(html.headers.get('cache-control')).toBe('no-cache');
    const text = await html.text();
    const scripts = [...text.matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)].map((match) => match[1]!);
    expect(scripts.length).toBeGreaterThan(1);
    for (const asset of scripts) {
      const plain = await fetch(`${server.url}${asset}`, { headers: { 'accept-encoding': 'identity' } });
      expect(plain.headers.get('content-encoding')).toBeNull();
      const plainText = await plain.text();
      // Files under 1 KiB are not worth compressing (the build leaves them plain).
      if (plainText.length < 1024) continue;
      const brotli = await fetch(`${server.url}${asset}`, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
      // fetch decodes the body; the headers still say what was sent.
      expect(brotli.headers.get('content-encoding'), asset).toBe('br');
      expect(brotli.headers.get('vary')).toMatch(/Accept-Encoding/i);
      expect(brotli.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const gzipOnly = await fetch(`${server.url}${asset}`, { headers: { 'accept-encoding': 'gzip' } });
      expect(gzipOnly.headers.get('content-encoding')).toBe('gzip');
      expect(await brotli.text()).toBe(plainText);
    }
  });

  it('item 2: a read-only user reloads the dashboard 30 times and visits every page without a 429 (100 GETs per IP per window); one session read per tab; no 4xx retried', async () => {
    const page = await pageAs(reader);
    const apiGets: string[] = [];
    const refused: string[] = [];
    page.on('response', (response) => {
      const url = new URL(response.url());
      if (!url.pathname.startsWith('/api/')) return;
      if (response.request().method() === 'GET') apiGets.push(url.pathname);
      if (response.status() === 429) refused.push(url.pathname);
    });
    const started = Date.now();
    await go(page, '/');
    for (let reload = 0; reload < 30; reload++) {
      await page.reload();
      await page.getByTestId('stat-Jobs').waitFor();
    }
    // Every page of the menu, by clicking (one tab: the session is read once).
    await go(page, '/');
    const sessionReadsBefore = apiGets.filter((path) => path === '/api/auth/session').length;
    const links = await page.getByRole('navigation').getByRole('link').allTextContents();
    expect(links.length).toBeGreaterThanOrEqual(13);
    for (const label of links) {
      await page.getByRole('navigation').getByRole('link', { name: label, exact: true }).click();
      await page.waitForLoadState('networkidle');
    }
    expect(apiGets.filter((path) => path === '/api/auth/session').length).toBe(sessionReadsBefore);
    // A 404 is asked for once, not three times.
    await page.goto(`${server.url}/runs/no-such-run`);
    await page.getByRole('alert').waitFor();
    await page.waitForTimeout(2_500);
    expect(apiGets.filter((path) => path === '/api/executions/no-such-run').length).toBe(1);
    const elapsed = Date.now() - started;
    console.log(`[issue 47] read-only user: ${apiGets.length} API reads in ${(elapsed / 1000).toFixed(1)} s (GET limit per IP: 100 per window), 429 answers: ${refused.length}`);
    // More reads than the per-IP limit allows: the old limiter would have refused some.
    expect(apiGets.length).toBeGreaterThan(100);
    expect(refused).toEqual([]);
  });

  it('item 2: every system setting is editable, task names are readable, an event with no channel is flagged', async () => {
    const page = await pageAs(admin);
    await go(page, '/settings');
    for (const key of ['maxConcurrentJobs', 'maxConcurrentFiles', 'authPoints', 'authDuration', 'apiPoints', 'apiDuration', 'mutationPoints', 'mutationDuration', 'stuckJobTimeoutMinutes', 'systemTimezone', 'audit.retentionDays', 'notification.logRetentionDays', 'privacy.recordTriggerActor']) {
      expect(await page.locator(`[data-setting="${key}"]`).count(), key).toBe(1);
    }
    await page.getByLabel('Concurrent files per job').fill('6');
    await page.getByLabel('Stuck-job timeout (minutes)').fill('90');
    await page.getByLabel("Record who started a run in the backup's metadata").uncheck();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(async () => {
      const stored = (await admin.call('GET', '/api/settings')).body;
      return [stored.maxConcurrentFiles, stored.stuckJobTimeoutMinutes, stored['privacy.recordTriggerActor']];
    }).toEqual([6, 90, false]);
    expect(await page.locator('[data-task="REFRESH_STORAGE_STATS"]').textContent()).toContain('Measure storage used');
    await captureHere(page, SHOTS, 'everyday-settings', findings);
    await go(page, '/settings/notifications');
    await page.getByTestId('system-event-row').first().waitFor();
    // Events on by default with no channel anywhere: each says it goes nowhere.
    expect(await page.getByTestId('event-goes-nowhere').count()).toBeGreaterThan(0);
  });

  it('item 7: a cold dashboard load stays under 450 KB of JavaScript and CSS and shows content within 1.5 s', async () => {
    const page = await pageAs(admin);
    const assets: Array<Promise<number>> = [];
    page.on('requestfinished', (request) => {
      if (!/\.(js|css)$/.test(new URL(request.url()).pathname)) return;
      assets.push(request.sizes().then((sizes) => sizes.responseBodySize + sizes.responseHeadersSize));
    });
    const started = Date.now();
    await page.goto(`${server.url}/`);
    await page.getByTestId('stat-Jobs').waitFor();
    const contentMs = Date.now() - started;
    await page.waitForLoadState('networkidle');
    const bytes = (await Promise.all(assets)).reduce((sum, size) => sum + size, 0);
    // The 1.5 s budget is for a quiet machine; this one is shared with other suites, so it scales with the load per
    // core (printed, so a slow figure is read with the load it was measured under).
    const loadPerCore = Math.max(1, loadavg()[0]! / availableParallelism());
    console.log(`[issue 47] cold dashboard: ${assets.length} JS/CSS files, ${(bytes / 1024).toFixed(1)} KiB transferred; content after ${contentMs} ms (load per core ${loadPerCore.toFixed(1)}, budget ${Math.round(1_500 * loadPerCore)} ms)`);
    expect(bytes).toBeLessThan(450_000);
    expect(contentMs).toBeLessThan(1_500 * loadPerCore);
    expect(await page.title()).toBe('Dashboard · Holdfast');
    await captureHere(page, SHOTS, 'everyday-dashboard', findings);
  });

  it('item 7: at 390 px every action is on screen; page titles follow the page; close buttons have names', async () => {
    const page = await pageAs(admin, { width: 390, height: 844 });
    const onScreen = async (name: string | RegExp, role: 'button' | 'link' = 'button') => {
      const target = page.getByRole(role, { name }).first();
      await target.waitFor();
      const box = (await target.boundingBox())!;
      expect(box.x, String(name)).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, String(name)).toBeLessThanOrEqual(390);
    };
    await go(page, '/jobs');
    expect(await page.title()).toBe('Jobs · Holdfast');
    await onScreen('Run now: Nightly files');
    await onScreen('New job', 'link');
    await go(page, `/storage?storage=${ids.destination}`);
    expect(await page.title()).toBe('Storage · Holdfast');
    await onScreen('Download');
    await onScreen('Restore');
    await onScreen('Delete');
    await page.getByRole('button', { name: 'Restore' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.setViewportSize({ width: 1440, height: 900 });
    await captureHere(page, SHOTS, 'everyday-storage', findings);
    expect(describeViolations(findings)).toEqual([]);
  });

  it('item 2: scripted clients keep the per-IP limit: the 101st GET of a window from one IP without a session is refused', async () => {
    const statuses: number[] = [];
    for (let request = 0; request < 101; request++) statuses.push((await fetch(`${server.url}/api/auth/status`)).status);
    expect(statuses.slice(0, 95).every((status) => status === 200)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
  });
});
