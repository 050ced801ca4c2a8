// End to end (issue 43, item 6's web part): the job page's point-in-time panel and the restore time picker, in
// Debian's Chromium (playwright-core) against the assembled server on the embedded database. A real physical-mode
// PostgreSQL source on the PITR test cluster (127.0.0.1:5433, role holdfast_repl, WAL partials every second) with a
// local destination: the supervisor streams WAL, one run of the job takes the base backup, and the window opens. The
// browser runs in Europe/Berlin (CET in December) so the time the picker sends carries a real offset. The replication
// slot is dropped afterwards: the shared cluster keeps WAL for every slot left behind.
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { ServerHandle } from '@holdfast/server';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureWebBuilt, findChromium } from './support/browser.js';
import { captureHere, describeViolations, type AxeFinding } from './support/pages.js';
import { signInCaller, useSessionIn, waitForFinal, type SessionCaller } from './support/sessions.js';
import { startWebStack } from './support/web-stack.js';

const run = promisify(execFile);
const SHOTS = fileURLToPath(new URL('../test-results/screenshots', import.meta.url));
const STAMP = `${Date.now()}`;
const ADMIN = { email: 'pitr-admin@example.test', password: `pw-${STAMP}-points in time` };
const PITR_RECIPE = new URL('../../../tooling/test-services/postgres-pitr.mjs', import.meta.url).href;
const TIME_ZONE = 'Europe/Berlin';
const STARTED_AT = new Date().toISOString();

const chromiumFound = await findChromium();
if ('reason' in chromiumFound) console.warn(`@holdfast/web point-in-time e2e skipped: ${chromiumFound.reason}`);
const suite = 'reason' in chromiumFound ? describe.skip : describe;

interface PitrCluster {
  host: string;
  port: number;
  stateDir: string;
  repl: { user: string; password: string };
}

/** Starts (or finds) the PITR test cluster, then reads where it is and the replication role's password from its state file. */
async function pitrCluster(): Promise<PitrCluster> {
  const recipe = (await import(PITR_RECIPE)) as { ensurePostgresPitr(): Promise<string>; PG_PITR_STATE_DIR: string; PG_PITR_STATE_FILE: string };
  await recipe.ensurePostgresPitr();
  const state = JSON.parse(await readFile(recipe.PG_PITR_STATE_FILE, 'utf8')) as { host: string; port: number; roles: { repl: { user: string; password: string } } };
  return { host: state.host, port: state.port, stateDir: recipe.PG_PITR_STATE_DIR, repl: state.roles.repl };
}

/** As the cluster's superuser over its Unix socket (trust), as the launcher administers it. */
async function superuser(cluster: PitrCluster, sql: string): Promise<string> {
  const { stdout } = await run('psql', ['-h', cluster.stateDir, '-p', String(cluster.port), '-U', 'postgres', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-Atc', sql]);
  return stdout.trim();
}

/** The replication slot name the WAL stream makes of a job id (docs/pitr.md, "Slot"). */
const slotOf = (jobId: string) => `holdfast_${jobId.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`;

/** `2026-12-06T14:03:27+01:00` for an instant (whole seconds) in Berlin in winter, computed apart from the app's code. */
function berlinWinterIso(epochMs: number): string {
  const wall = new Date(epochMs + 60 * 60_000).toISOString().slice(0, 19);
  return `${wall}+01:00`;
}

async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

suite(`point-in-time panel and restore picker in Chromium${'reason' in chromiumFound ? ` (skipped: ${chromiumFound.reason})` : ''}`, () => {
  let server: ServerHandle;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: SessionCaller;
  let cluster: PitrCluster;
  let dataDir: string;
  let localDir: string;
  let restoreParent: string;
  let jobId: string | undefined;
  let writer: ReturnType<typeof setInterval> | undefined;
  const findings: AxeFinding[] = [];

  beforeAll(async () => {
    if (new Date().getUTCMonth() !== 11 && new Date().getUTCMonth() > 1) console.warn('berlinWinterIso assumes CET: run outside November-March gives CEST times');
    ensureWebBuilt();
    cluster = await pitrCluster();
    dataDir = await mkdtemp(join(tmpdir(), 'holdfast-web-pitr-'));
    localDir = await mkdtemp(join(tmpdir(), 'holdfast-web-pitr-local-'));
    restoreParent = await mkdtemp(join(tmpdir(), 'holdfast-web-pitr-restore-'));
    // Holdfast runs as root here; the restored server runs as "postgres", which must be able to enter the parent.
    await chmod(restoreParent, 0o755);
    ({ server, browser, admin } = await startWebStack({ dataDir, chromiumPath: (chromiumFound as { path: string }).path, admin: ADMIN }));
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, timezoneId: TIME_ZONE, locale: 'en-GB' });
    await useSessionIn(context, server.url, admin);
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    // A window grows only with new WAL (docs/pitr.md, "Seen on a quiet server"): one commit a second keeps it moving
    // when no other suite writes to the shared cluster (CI timed out waiting for the window on a quiet cluster).
    writer = setInterval(() => void superuser(cluster, 'SELECT txid_current()').catch(() => undefined), 1_000);
  }, 120_000);

  afterAll(async () => {
    clearInterval(writer);
    await browser?.close();
    // Closing the server stops the WAL stream; its WAL sender may hold the slot a moment longer.
    await server?.close();
    if (jobId && cluster) {
      const slot = slotOf(jobId);
      const deadline = Date.now() + 20_000;
      while ((await superuser(cluster, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = '${slot}'`)) !== '0') {
        await superuser(cluster, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '${slot}' AND NOT active`).catch(() => undefined);
        if (Date.now() > deadline) throw new Error(`replication slot ${slot} is still on the PITR cluster: drop it by hand`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    for (const dir of [dataDir, localDir, restoreParent]) if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  afterEach(async (test) => {
    if (test.task.result?.state === 'fail') await page?.screenshot({ path: join(SHOTS, `failed-pitr-${test.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
  });

  const field = (name: string) => page.locator(`[data-field="${name}"]`);
  const pointInTime = async () => (await admin.call('GET', `/api/jobs/${jobId}/point-in-time`)).body.data;

  it('a physical-mode source streams WAL; one run takes the base backup and the window opens', async () => {
    expect((await admin.call('PUT', '/api/settings', { authPoints: 10_000, apiPoints: 100_000, mutationPoints: 100_000 })).status).toBe(200);
    const source = await admin.call('POST', '/api/adapters', {
      type: 'database',
      adapterId: 'postgres',
      name: 'pitr cluster',
      config: { mode: 'physical', host: cluster.host, port: cluster.port, user: cluster.repl.user, password: cluster.repl.password, sslMode: 'disable', walFlushIntervalSeconds: 1 },
    });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    const destination = await admin.call('POST', '/api/adapters', { type: 'storage', adapterId: 'local', name: 'wal disk', config: { path: localDir } });
    expect(destination.status, JSON.stringify(destination.body)).toBe(201);
    const job = await admin.call('POST', '/api/jobs', { name: 'cluster pitr', sourceId: source.body.id, databases: [], schedule: '0 3 * * *', destinations: [{ configId: destination.body.id }] });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    jobId = job.body.id as string;
    // Before any base backup: enabled, no window; the page says what to do.
    expect(await pointInTime()).toMatchObject({ enabled: true, window: null });
    await page.goto(`${server.url}/jobs/${jobId}`);
    const empty = page.getByTestId('pitr-no-window');
    await empty.waitFor();
    expect(await empty.textContent()).toContain('Take a base backup: run the job.');
    expect(await page.getByTestId('pitr-recovery-point').textContent()).toBe('none yet');
    // The supervisor re-reads the jobs every 15 s and opens the stream (and its slot) for the new job.
    await until('the WAL stream to start', async () => (await pointInTime()).streaming?.state === 'streaming', 60_000);
    const trigger = await admin.call('POST', `/api/jobs/${jobId}/run`, {});
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(200);
    expect(await waitForFinal(admin, trigger.body.executionId, 120_000)).toBe('Success');
    // WAL after the base backup's end: a commit, then a switch so a completed segment follows the backup too.
    await superuser(cluster, 'SELECT txid_current()');
    await superuser(cluster, 'SELECT pg_switch_wal()');
    // The window opens as a single instant (start = end) and grows with every partial.
    let seen: unknown;
    const view = await until('a recoverable window of at least two seconds', async () => {
      const current = await pointInTime();
      seen = current;
      return current.window && Date.parse(current.window.end) - Date.parse(current.window.start) >= 2_000 ? current : null;
    }, 90_000).catch((error: Error) => {
      // What the job reported last (stream state, pieces, gaps): enough to tell a stalled stream from a quiet server.
      throw new Error(`${error.message}; the job's point-in-time view last said ${JSON.stringify(seen)}`);
    });
    expect(Date.parse(view.window.start)).toBeGreaterThan(Date.parse(STARTED_AT));
    expect(view.recoveryPointSeconds).toEqual(expect.any(Number));
  }, 300_000);

  it('the job page shows the window in the browser zone, the recovery point, the stream and the archive', async () => {
    await page.goto(`${server.url}/jobs/${jobId}`);
    const panel = page.getByTestId('pitr-panel');
    await panel.waitFor();
    const view = await pointInTime();
    const windowText = await page.getByTestId('pitr-window').textContent();
    // The start is fixed once the window exists; the end moves every second with the partials.
    expect(windowText).toContain(`${berlinWinterIso(Date.parse(view.window.start)).slice(0, 19).replace('T', ' ')} – `);
    expect(windowText).toMatch(/ CET \(Europe\/Berlin\)$/);
    expect(await page.getByTestId('pitr-recovery-point').textContent()).toMatch(/^\d+ s ago$/);
    expect(await page.getByTestId('pitr-stream-state').getAttribute('data-status')).toBe('streaming');
    expect(await page.getByTestId('pitr-streamer').textContent()).toMatch(/^by .+ \(pid \d+\) since /);
    expect(await page.getByTestId('pitr-archive').textContent()).toMatch(/^\d+ WAL pieces?, [\d.]+ (B|KiB|MiB|GiB) \(one copy\)$/);
    expect(await page.getByTestId('pitr-gaps').count()).toBe(0);
    // It refreshes itself: the recovery point is read again within the ten seconds.
    const before = await page.waitForResponse((response) => response.url().endsWith(`/api/jobs/${jobId}/point-in-time`), { timeout: 15_000 });
    expect(before.status()).toBe(200);
    await captureHere(page, SHOTS, 'pitr-panel', findings, '[data-testid="pitr-panel"]');
  }, 120_000);

  it('the dashboard lists the job with its recovery point, window and archive', async () => {
    await page.goto(`${server.url}/`);
    const row = page.getByTestId(`pitr-overview-${jobId}`);
    await row.waitFor();
    const view = await pointInTime();
    const cells = await row.locator('td').allTextContents();
    expect(cells[1]).toMatch(/^\d+ s ago$/);
    expect(cells[2]).toContain(`${berlinWinterIso(Date.parse(view.window.start)).slice(0, 19).replace('T', ' ')} – `);
    expect(cells[4]).toMatch(/^\d+ pieces, [\d.]+ (B|KiB|MiB|GiB)$/);
    expect(await row.getByRole('link').getAttribute('href')).toBe(`/jobs/${jobId}`);
    await captureHere(page, SHOTS, 'pitr-dashboard', findings, '[data-testid="pitr-overview"]');
  }, 120_000);

  it('the picker refuses a time before the window with the window in the message, and sends a time inside with its offset', async () => {
    await page.goto(`${server.url}/jobs/${jobId}`);
    await page.getByTestId('pitr-restore-open').click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    const view = await pointInTime();
    const first = Math.ceil(Date.parse(view.window.start) / 1000) * 1000;
    const tooEarly = berlinWinterIso(first - 1000);
    await field('pitr-date').fill(tooEarly.slice(0, 10));
    await field('pitr-time').fill(tooEarly.slice(11, 19));
    const error = dialog.getByText(/^Pick a time inside the recoverable window: /);
    await error.waitFor();
    expect(await error.textContent()).toContain(`${berlinWinterIso(Date.parse(view.window.start)).slice(0, 19).replace('T', ' ')} – `);
    expect(await error.textContent()).toMatch(/ CET \(Europe\/Berlin\)$/);
    const target = join(restoreParent, 'cluster');
    await field('pitr-target-path').fill(target);
    expect(await page.getByTestId('pitr-restore-start').isDisabled()).toBe(true);
    expect(await page.getByTestId('pitr-restore-summary').count()).toBe(0);

    // Relative paths are refused before anything is sent.
    await field('pitr-target-path').fill('restore/cluster');
    await field('pitr-target-path').blur();
    await dialog.getByText('Use an absolute path on the Holdfast server').waitFor();
    await field('pitr-target-path').fill(target);

    // The first whole second of the window is inside.
    const chosen = berlinWinterIso(first);
    await field('pitr-time').fill(chosen.slice(11, 19));
    await field('pitr-date').fill(chosen.slice(0, 10));
    const summary = page.getByTestId('pitr-restore-summary');
    await summary.waitFor();
    expect(await summary.textContent()).toContain(`Restore the cluster as it was at ${chosen.slice(0, 19).replace('T', ' ')} CET into ${target}.`);
    expect(await error.count()).toBe(0);
    await captureHere(page, SHOTS, 'pitr-restore-dialog', findings, '[role="dialog"]');

    // Replay stops at the first commit after the target: make one now and let the stream archive it.
    await superuser(cluster, 'SELECT txid_current()');
    const committed = Date.now();
    await until('the window to cover a commit after the target', async () => Date.parse((await pointInTime()).window.end) > committed, 30_000);
    const posted = page.waitForRequest((request) => request.method() === 'POST' && request.url().endsWith(`/api/jobs/${jobId}/point-in-time/restore`));
    const answered = page.waitForResponse((response) => response.request().method() === 'POST' && response.url().endsWith(`/api/jobs/${jobId}/point-in-time/restore`));
    await page.getByTestId('pitr-restore-start').click();
    const request = await posted;
    expect(request.postDataJSON()).toEqual({ target: { type: 'time', time: chosen }, targetPath: target });
    expect(request.headers()['x-holdfast-web']).toBe('1');
    const response = await answered;
    const body = (await response.json().catch(() => null)) as { data?: { executionId?: string }; error?: string } | null;
    if (response.status() === 202) {
      // The run's own page, as every other restore.
      await page.waitForURL(new RegExp(`/runs/${body!.data!.executionId}$`));
      await page.getByTestId('run-status').waitFor();
      const status = await waitForFinal(admin, body!.data!.executionId!, 240_000);
      const execution = (await admin.call('GET', `/api/executions/${body!.data!.executionId}?includeLogs=true`)).body.data;
      expect(status, `${execution.error ?? ''}\n${(execution.logs ?? []).map((line: { message: string }) => line.message).join('\n')}`).toBe('Success');
      // A promoted data directory is left in the target (no serve port: the server was stopped).
      expect((await stat(join(target, 'PG_VERSION'))).isFile()).toBe(true);
    } else {
      // The route refused (or is not there yet): its own message is shown in the dialog, which stays open.
      expect(body?.error, `status ${response.status()}`).toEqual(expect.any(String));
      const shown = dialog.getByRole('alert').filter({ hasText: 'Restore refused' });
      await shown.waitFor();
      expect(await shown.textContent()).toContain(body!.error!);
      console.info(`point-in-time restore answered ${response.status()}: ${body!.error}`);
    }
  }, 360_000);

  it('the latest choice, a refusal of the server shown in its words, and the advanced targets', async () => {
    await page.goto(`${server.url}/jobs/${jobId}`);
    await page.getByTestId('pitr-restore-open').click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await field('pitr-target-path').fill(join(restoreParent, 'latest'));
    await dialog.getByLabel('The latest archived WAL').check();
    expect(await page.getByTestId('pitr-restore-summary').textContent()).toContain(`Restore the cluster as of the newest archived WAL into ${join(restoreParent, 'latest')}.`);
    expect(await page.getByTestId('pitr-restore-start').isDisabled()).toBe(false);
    // The server's refusal is shown in the dialog in its own words: the parent holds the restored cluster, not empty.
    await field('pitr-target-path').fill(restoreParent);
    const answered = page.waitForResponse((response) => response.request().method() === 'POST' && response.url().endsWith(`/api/jobs/${jobId}/point-in-time/restore`));
    await page.getByTestId('pitr-restore-start').click();
    const refusal = await answered;
    expect(refusal.status()).toBeGreaterThanOrEqual(400);
    const refusalBody = (await refusal.json()) as { error: string };
    expect(refusalBody.error).toMatch(/empty/);
    const shown = dialog.getByRole('alert').filter({ hasText: 'Restore refused' });
    await shown.waitFor();
    expect(await shown.textContent()).toContain(refusalBody.error);
    expect(page.url()).toBe(`${server.url}/jobs/${jobId}`);
    await field('pitr-advanced').click();
    await dialog.getByLabel('A WAL position (LSN)').check();
    await field('pitr-position').fill('3000028');
    await dialog.getByText('Enter a WAL position (LSN) such as 0/3000028').waitFor();
    expect(await page.getByTestId('pitr-restore-start').isDisabled()).toBe(true);
    await field('pitr-position').fill('0/3000028');
    expect(await page.getByTestId('pitr-restore-summary').textContent()).toContain('up to WAL position 0/3000028');
    await dialog.getByLabel('A named restore point (pg_create_restore_point)').check();
    await field('pitr-name').fill('before-migration');
    expect(await page.getByTestId('pitr-restore-summary').textContent()).toContain('at the restore point "before-migration"');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
  }, 120_000);

  it('a reader without storage:restore sees the panel but no restore button; a logical-mode job has no panel', async () => {
    // The job page itself needs the sources and destinations readable; everything but storage:restore.
    const group = await admin.call('POST', '/api/groups', { name: 'PITR readers', permissions: ['jobs:read', 'history:read', 'sources:read', 'destinations:read'] });
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    const reader = { name: 'Rita Reader', email: 'pitr-reader@example.test', password: `pw-${STAMP}-only looking` };
    const made = await admin.call('POST', '/api/users', { ...reader, groupId: group.body.id });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const readerContext = await browser.newContext({ viewport: { width: 1440, height: 900 }, timezoneId: TIME_ZONE });
    await useSessionIn(readerContext, server.url, await signInCaller(server.url, reader.email, reader.password));
    const readerPage = await readerContext.newPage();
    await readerPage.goto(`${server.url}/jobs/${jobId}`);
    try {
      await readerPage.getByTestId('pitr-window').waitFor();
      expect(await readerPage.getByTestId('pitr-restore-open').count()).toBe(0);
    } finally {
      await readerPage.screenshot({ path: join(SHOTS, 'pitr-panel-reader.png') });
      await readerContext.close();
    }

    const logical = await admin.call('POST', '/api/adapters', { type: 'database', adapterId: 'postgres', name: 'logical pg', config: { host: '127.0.0.1', port: 5432, user: 'postgres' } });
    expect(logical.status, JSON.stringify(logical.body)).toBe(201);
    const destinations = (await admin.call('GET', '/api/adapters?type=storage')).body as Array<{ id: string }>;
    const dumps = await admin.call('POST', '/api/jobs', { name: 'logical dumps', sourceId: logical.body.id, databases: ['postgres'], schedule: '0 3 * * *', destinations: [{ configId: destinations[0]!.id }] });
    expect(dumps.status, JSON.stringify(dumps.body)).toBe(201);
    const answered = page.waitForResponse((response) => response.url().endsWith(`/api/jobs/${dumps.body.id}/point-in-time`));
    await page.goto(`${server.url}/jobs/${dumps.body.id}`);
    const answer = await answered;
    expect(await answer.json()).toEqual({ success: true, data: { enabled: false } });
    await page.getByTestId('run-now').waitFor();
    expect(await page.getByTestId('pitr-panel').count()).toBe(0);
  }, 120_000);

  it('has no serious accessibility problems in the panel and the dialog', () => {
    expect(describeViolations(findings)).toEqual([]);
  });
});
