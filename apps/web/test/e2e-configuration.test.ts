// End to end: the configuration pages of the admin web app in Debian's Chromium (playwright-core) against the
// assembled server on the embedded database. Through the pages: a credential profile with a generated SSH key and a
// password profile (secret kept when left empty), an encryption profile with its recovery kit downloaded (and its
// deletion refused while a job uses it), a retention policy, a naming template (live preview), a schedule preset,
// a group with permissions and a scoped grant (and a user put in it), a notification template bound to a channel,
// the system notification events, the notification log, system tasks (schedule, run now) and the job editor (next
// runs, templates, retention preview). Screenshots and axe scans of each new page, and the page rules of
// e2e.test.ts: API calls only through the typed client, no secret in any answer.
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startServer, type ServerHandle } from '@holdfast/server';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, ensureWebBuilt, findChromium, WEB_ROOT } from './support/browser.js';
import { captureHere, describeViolations, recordTraffic, type AxeFinding, type SeenBody, type SeenRequest } from './support/pages.js';

const run = promisify(execFile);
const SHOTS = fileURLToPath(new URL('../test-results/screenshots', import.meta.url));
const STAMP = `${Date.now()}`;
const ADMIN = { email: 'config-admin@example.test', password: `pw-${STAMP}-tidy lighthouse` };
/** Secrets typed into forms or stored beside them: none may come back in any answer the app receives. */
const PROFILE_PASSWORD = `cred-${STAMP}-never-echoed`;
/** The webhook channel's Authorization header: a secret field of the adapter (its URL is not one). */
const WEBHOOK_TOKEN = `hook-${STAMP}-bearer-secret`;

const chromiumFound = await findChromium();
if ('reason' in chromiumFound) console.warn(`@holdfast/web configuration e2e skipped: ${chromiumFound.reason}`);
const suite = 'reason' in chromiumFound ? describe.skip : describe;

suite(`configuration pages in Chromium${'reason' in chromiumFound ? ` (skipped: ${chromiumFound.reason})` : ''}`, () => {
  let server: ServerHandle;
  let hookServer: Server;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let localDir: string;
  const hooks: string[] = [];
  const requests: SeenRequest[] = [];
  const bodies: SeenBody[] = [];
  const pending: Promise<unknown>[] = [];
  const findings: AxeFinding[] = [];
  const cspErrors: string[] = [];
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    ensureWebBuilt();
    await mkdir(SHOTS, { recursive: true });
    dataDir = await mkdtemp(join(tmpdir(), 'holdfast-web-config-'));
    localDir = await mkdtemp(join(tmpdir(), 'holdfast-web-config-local-'));
    // A real HTTP endpoint for the webhook channel: the notification log then holds a delivered notification.
    hookServer = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        hooks.push(`${request.method} ${request.url} ${request.headers.authorization ?? ''} ${body}`);
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => hookServer.listen(0, '127.0.0.1', resolve));
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
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    recordTraffic(page, requests, bodies, pending);
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) cspErrors.push(message.text());
    });
    // Deletions ask first (window.confirm): say yes.
    page.on('dialog', (dialog) => void dialog.accept());
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await new Promise((resolve) => hookServer?.close(resolve));
    await rm(dataDir, { recursive: true, force: true });
    await rm(localDir, { recursive: true, force: true });
  });

  afterEach(async (test) => {
    if (test.task.result?.state === 'fail') await page?.screenshot({ path: join(SHOTS, `failed-config-${test.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
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
  const row = (testId: string, text: string) => page.getByTestId(testId).filter({ hasText: text });
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

  it('signs in; a channel, a source, a destination and a job exist to refer to', async () => {
    await go('/sign-in');
    await page.getByLabel(/^Email/).fill(ADMIN.email);
    await page.getByLabel(/^Password/).fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    expect((await adminCall('PUT', '/api/settings', { authPoints: 10_000, apiPoints: 100_000, mutationPoints: 100_000 })).status).toBe(200);
    const hookUrl = `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/hook`;
    const channel = await adminCall('POST', '/api/adapters', { type: 'notification', adapterId: 'generic-webhook', name: 'ops webhook', config: { webhookUrl: hookUrl, authHeader: `Bearer ${WEBHOOK_TOKEN}` } });
    expect(channel.status).toBe(201);
    ids.channel = channel.body.id;
    const source = await adminCall('POST', '/api/adapters', { type: 'database', adapterId: 'postgres', name: 'orders db', config: { host: '127.0.0.1', port: 5432, user: 'postgres' } });
    expect(source.status).toBe(201);
    const destination = await adminCall('POST', '/api/adapters', { type: 'storage', adapterId: 'local', name: 'local disk', config: { path: localDir } });
    expect(destination.status).toBe(201);
    const job = await adminCall('POST', '/api/jobs', { name: 'orders nightly', sourceId: source.body.id, schedule: '0 3 * * *', destinations: [{ configId: destination.body.id }] });
    expect(job.status).toBe(201);
    ids.job = job.body.id;
    // The rate limits apply within 5 s.
    await new Promise((resolve) => setTimeout(resolve, 5_500));
  });

  it('credential profiles: generates an SSH key (public key shown), keeps a stored password left empty, deletes', async () => {
    await go('/credentials');
    await page.getByText('No credential profiles yet.').waitFor();
    await page.getByRole('button', { name: 'Generate SSH key' }).click();
    await field('ssh-name').fill('deploy key');
    await field('ssh-username').fill('backup');
    await page.getByRole('button', { name: 'Generate key' }).click();
    const publicKey = (await page.getByTestId('public-key').textContent())!.trim();
    expect(publicKey).toMatch(/^ssh-ed25519 AAAA[0-9A-Za-z+/=]+/);
    await row('credential-row', 'deploy key').getByText('0 configurations, 0 jobs').waitFor();

    await page.getByRole('button', { name: 'Add profile' }).click();
    await field('credential-name').fill('db login');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByText('Enter the username').waitFor();
    await field('credential-username').fill('svc_backup');
    await field('credential-password').fill(PROFILE_PASSWORD);
    await page.getByRole('button', { name: 'Save profile' }).click();
    await row('credential-row', 'db login').waitFor();
    await captureHere(page, SHOTS, 'credentials', findings);

    // Editing: the secret is "stored", never filled in; saved empty it stays what it was.
    await page.getByRole('button', { name: 'Edit db login' }).click();
    await expect.poll(() => field('credential-password').getAttribute('placeholder')).toMatch(/stored/);
    expect(await field('credential-password').inputValue()).toBe('');
    await field('credential-username').fill('svc_backup2');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByRole('button', { name: 'Save profile' }).waitFor({ state: 'detached' });
    const listed = (await adminCall('GET', '/api/credentials')).body as Array<{ id: string; name: string; type: string }>;
    const login = listed.find((profile) => profile.name === 'db login')!;
    expect(login.type).toBe('USERNAME_PASSWORD');
    const revealed = await adminCall('POST', `/api/credentials/${login.id}/reveal`);
    expect(revealed.body.data).toMatchObject({ username: 'svc_backup2', password: PROFILE_PASSWORD });
    expect(listed.find((profile) => profile.name === 'deploy key')!.type).toBe('SSH_KEY');

    await page.getByRole('button', { name: 'Delete db login' }).click();
    await row('credential-row', 'db login').waitFor({ state: 'detached' });
    expect(((await adminCall('GET', '/api/credentials')).body as Array<{ name: string }>).map((profile) => profile.name)).toEqual(['deploy key']);
  });

  it('encryption profiles: adds one, downloads its recovery kit, and shows the refusal to delete it while a job uses it', async () => {
    await go('/encryption');
    await page.getByText('No encryption profiles yet.').waitFor();
    await field('vault-name').fill('offsite key');
    await page.getByRole('button', { name: 'Add profile' }).click();
    await row('vault-row', 'offsite key').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the recovery kit of offsite key' }).click()]);
    expect(download.suggestedFilename()).toBe('holdfast-recovery-kit-offsite-key.tar');
    const saved = join(dataDir, 'recovery-kit.tar');
    await download.saveAs(saved);
    expect((await stat(saved)).size).toBeGreaterThan(512);
    const { stdout } = await run('tar', ['-tf', saved]);
    const entries = stdout.trim().split('\n');
    expect(entries.filter((entry) => !entry.startsWith('holdfast-recovery-kit-offsite-key/'))).toEqual([]);
    expect(entries).toContain('holdfast-recovery-kit-offsite-key/holdfast-key.txt');
    expect(entries.length).toBeGreaterThanOrEqual(3);
    await captureHere(page, SHOTS, 'encryption', findings);

    const profile = ((await adminCall('GET', '/api/vault')).body as Array<{ id: string; name: string }>).find((entry) => entry.name === 'offsite key')!;
    ids.vault = profile.id;
    expect((await adminCall('PUT', `/api/jobs/${ids.job}`, { encryptionProfileId: profile.id })).status).toBe(200);
    await page.getByRole('button', { name: 'Delete offsite key' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'Could not delete the profile' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/job|in use/i);
    expect(await row('vault-row', 'offsite key').count()).toBe(1);
  });

  it('encryption profiles: a public-key profile (issue 45) shows its recipient, has no recovery kit, and a bad key is refused', async () => {
    // The recipient comes from Debian's age-keygen (installed by the test services).
    const keygen = await run('age-keygen', []).catch(() => {
      throw new Error('age-keygen is missing: run `npm run test:services` (as root) or `apt-get install -y age`');
    });
    const recipient = /age1[0-9a-z]+/.exec(keygen.stderr + keygen.stdout)![0];
    await field('vault-name').fill('owner public key');
    await field('vault-public-key').fill('age1 not a key');
    await page.getByRole('button', { name: 'Add profile' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'Could not add the profile' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/publicKey/);
    await field('vault-public-key').fill(recipient);
    await page.getByRole('button', { name: 'Add profile' }).click();
    await row('vault-row', 'owner public key').filter({ hasText: recipient }).waitFor();
    expect(await row('vault-row', 'owner public key').textContent()).toMatch(/Public key only/);
    expect(await page.getByRole('button', { name: 'Download the recovery kit of owner public key' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Download the recovery kit of offsite key' }).count()).toBe(1);
    const stored = ((await adminCall('GET', '/api/vault')).body as Array<{ name: string; kind: string; publicKey: string | null }>).find((entry) => entry.name === 'owner public key');
    expect(stored).toMatchObject({ kind: 'public-key', publicKey: recipient });
  });

  it('retention policies, naming templates (live preview) and schedule presets', async () => {
    await go('/retention-policies');
    await row('policy-row', 'Keep last 14').waitFor();
    await page.getByRole('button', { name: 'Add policy' }).click();
    await field('policy-name').fill('keep five');
    await choose('policy-mode', 'Keep the newest N backups');
    await field('policy-count').fill('5');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await row('policy-row', 'keep five').getByText('Keep the newest 5').waitFor();
    const policies = (await adminCall('GET', '/api/retention-policies')).body as Array<{ id: string; name: string; config: unknown }>;
    expect(policies.find((policy) => policy.name === 'keep five')!.config).toEqual({ mode: 'keep-last', count: 5 });
    await captureHere(page, SHOTS, 'retention-policies', findings);

    await go('/naming-templates');
    await page.getByRole('button', { name: 'Add template' }).click();
    await field('naming-name').fill('nightly names');
    await field('naming-pattern').fill("{job_name}_'nightly'_yyyy-MM-dd_{chain}");
    // The server has the system timezone at UTC: the docs' example moment renders as written there.
    await expect.poll(() => page.getByTestId('naming-preview').textContent()).toBe('Immich_nightly_2026-11-19');
    await field('naming-pattern').fill('{job}_yyyy');
    await expect.poll(() => page.getByTestId('naming-problem').textContent()).toContain('unknown token "{job}"');
    await field('naming-pattern').fill('{job_name}_HH-mm');
    await expect.poll(() => page.getByTestId('naming-preview').textContent()).toBe('Immich_10-05');
    await captureHere(page, SHOTS, 'naming-template-edit', findings);
    await page.getByRole('button', { name: 'Save template' }).click();
    await row('naming-row', 'nightly names').getByText('{job_name}_HH-mm').waitFor();
    await captureHere(page, SHOTS, 'naming-templates', findings);

    await go('/schedule-presets');
    await row('preset-row', 'Hourly').waitFor();
    await page.getByRole('button', { name: 'Add preset' }).click();
    await field('preset-name').fill('Twice daily');
    await field('preset-schedule').fill('0 6,18 * * *');
    await expect.poll(() => page.getByTestId('next-run').count()).toBe(5);
    await page.getByRole('button', { name: 'Save preset' }).click();
    await row('preset-row', 'Twice daily').getByText('0 6,18 * * *').waitFor();
    await captureHere(page, SHOTS, 'schedule-presets', findings);
  });

  it('groups: permissions by area and a scoped grant; a user is put in the group on the users page', async () => {
    await go('/groups');
    await page.getByRole('button', { name: 'Add group' }).click();
    await field('group-name').fill('operators');
    await page.getByRole('checkbox', { name: 'history:read', exact: true }).check();
    await page.getByRole('checkbox', { name: 'storage:read', exact: true }).check();
    await page.getByRole('button', { name: 'Add scoped grant' }).click();
    const grant = page.getByTestId('grant-row').first();
    await grant.getByLabel('Records', { exact: true }).first().click();
    await page.getByRole('option', { name: 'orders nightly', exact: true }).click();
    await page.keyboard.press('Escape');
    await captureHere(page, SHOTS, 'group-edit', findings);
    await page.getByRole('button', { name: 'Save group' }).click();
    await row('group-row', 'operators').getByText('jobs:read on 1 jobs').waitFor();
    const group = ((await adminCall('GET', '/api/groups')).body.groups as Array<{ id: string; name: string; permissions: string[]; grants: unknown[] }>).find((entry) => entry.name === 'operators')!;
    expect([...group.permissions].sort()).toEqual(['history:read', 'storage:read']);
    expect(group.grants).toEqual([{ permission: 'jobs:read', resourceType: 'job', resourceIds: [ids.job] }]);
    await captureHere(page, SHOTS, 'groups', findings);

    const user = await adminCall('POST', '/api/users', { name: 'Olli Operator', email: 'olli@example.test', password: `olli-${STAMP}-long enough` });
    expect(user.status).toBe(201);
    await go('/users');
    await page.getByLabel('Group of Olli Operator', { exact: true }).first().click();
    await page.getByRole('option', { name: 'operators', exact: true }).click();
    await expect.poll(async () => ((await adminCall('GET', '/api/users')).body.users as Array<{ email: string; groupId: string | null }>).find((entry) => entry.email === 'olli@example.test')!.groupId).toBe(group.id);
    await captureHere(page, SHOTS, 'users-groups', findings);
  });

  it('notification templates bind a channel per outcome; system events; the notification log', async () => {
    await go('/notification-templates');
    await page.getByText('No notification templates yet.').waitFor();
    await page.getByRole('button', { name: 'Add template' }).click();
    await field('ntemplate-name').fill('ops alerts');
    await page.getByRole('checkbox', { name: 'ops webhook: Failed' }).check();
    await page.getByRole('checkbox', { name: 'ops webhook: Partial' }).check();
    await captureHere(page, SHOTS, 'notification-template-edit', findings);
    await page.getByRole('button', { name: 'Save template' }).click();
    await row('ntemplate-row', 'ops alerts').getByText('ops webhook (Partial, Failed)').waitFor();
    const templates = (await adminCall('GET', '/api/notification-templates')).body as Array<{ id: string; name: string; bindings: unknown[] }>;
    const template = templates.find((entry) => entry.name === 'ops alerts')!;
    ids.notificationTemplate = template.id;
    expect(template.bindings).toEqual([{ channelId: ids.channel, onSuccess: false, onPartial: true, onFailed: true }]);
    await captureHere(page, SHOTS, 'notification-templates', findings);

    await go('/settings/notifications');
    const configBackup = page.getByLabel('Enable Configuration backup made', { exact: true });
    expect(await configBackup.isChecked()).toBe(false);
    await configBackup.check({ force: true });
    await page.getByLabel('Channels for System error', { exact: true }).first().click();
    await page.getByRole('option', { name: 'ops webhook', exact: true }).click();
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Save system notifications' }).click();
    await expect
      .poll(async () => (await adminCall('GET', '/api/settings')).body['notifications.config'].events)
      .toMatchObject({ config_backup: { enabled: true, channels: null }, system_error: { enabled: true, channels: [ids.channel] } });
    await captureHere(page, SHOTS, 'system-notifications', findings);

    // A delivered test notification appears in the log with its channel, event and status.
    const test = await adminCall('POST', '/api/notifications/test', { channelIds: [ids.channel] });
    expect(test.status).toBe(200);
    expect(hooks.some((hook) => hook.startsWith(`POST /hook Bearer ${WEBHOOK_TOKEN}`))).toBe(true);
    await go('/notifications/log');
    const entry = page.getByTestId('notification-row').first();
    await entry.waitFor();
    expect(await entry.textContent()).toContain('ops webhook');
    expect(await entry.textContent()).toContain('Success');
    await captureHere(page, SHOTS, 'notification-log', findings);
  });

  it('system tasks: a schedule changed and a task run now, listed under the latest runs', async () => {
    await go('/settings');
    const schedule = page.getByLabel('Schedule of CLEAN_OLD_LOGS', { exact: true });
    await schedule.fill('30 4 * * *');
    await page.getByRole('button', { name: 'Save the schedule of CLEAN_OLD_LOGS' }).click();
    await expect
      .poll(async () => ((await adminCall('GET', '/api/settings/system-tasks')).body as Array<{ task: string; schedule: string }>).find((task) => task.task === 'CLEAN_OLD_LOGS')!.schedule)
      .toBe('30 4 * * *');
    await page.getByRole('button', { name: 'Run now: CLEAN_OLD_LOGS' }).click();
    const runRow = page.getByTestId('system-task-run').filter({ hasText: 'CLEAN_OLD_LOGS' }).first();
    await runRow.waitFor();
    await expect.poll(() => runRow.textContent(), { timeout: 60_000 }).toMatch(/Manual/);
    await captureHere(page, SHOTS, 'settings-tasks', findings);
  });

  it('job editor: the next 5 runs of the schedule, a linked schedule preset, template choices, skipVerification, and the retention preview of a saved job', async () => {
    await go('/jobs/new');
    await expect.poll(() => page.getByTestId('next-run').count()).toBe(5);
    await field('job-schedule').fill('not a cron');
    await page.getByTestId('next-runs').getByRole('status').waitFor();
    expect(await page.getByTestId('next-run').count()).toBe(0);
    await captureHere(page, SHOTS, 'job-new', findings);

    await go(`/jobs/${ids.job}`);
    await expect.poll(() => page.getByTestId('next-run').count()).toBe(5);
    await choose('job-naming-template', 'nightly names ({job_name}_HH-mm)');
    await choose('job-notification-template', 'ops alerts');
    // A stored preset is linked, not copied: the job records the preset and takes its cron.
    await choose('job-schedule-preset', 'Twice daily (0 6,18 * * *)');
    expect(await field('job-schedule').inputValue()).toBe('0 6,18 * * *');
    await page.getByText('Follows the preset "Twice daily"').waitFor();
    await field('job-skip-verification').check();
    await choose('job-compression', 'ZSTD');
    await field('job-compression-level').fill('5');
    await field('job-compression-threads').fill('2');
    await page.getByRole('button', { name: 'Show retention preview' }).click();
    await page.getByTestId('retention-destination').filter({ hasText: 'local disk' }).getByText('No backups yet.').waitFor();
    await captureHere(page, SHOTS, 'job-edit-preview', findings);
    await page.getByRole('button', { name: 'Save job' }).click();
    await page.waitForURL(/\/jobs$/);
    const job = (await adminCall('GET', `/api/jobs/${ids.job}`)).body as { namingTemplateId: string; notificationTemplateId: string; encryptionProfileId: string; schedule: string; schedulePresetId: string | null; skipVerification: boolean; compression: string; compressionLevel: number | null; compressionThreads: number | null };
    const preset = ((await adminCall('GET', '/api/schedule-presets')).body as Array<{ id: string; name: string }>).find((entry) => entry.name === 'Twice daily')!;
    expect(job).toMatchObject({ schedule: '0 6,18 * * *', schedulePresetId: preset.id, skipVerification: true, compression: 'ZSTD', compressionLevel: 5, compressionThreads: 2 });
    expect(job.notificationTemplateId).toBe(ids.notificationTemplate);
    expect(job.encryptionProfileId).toBe(ids.vault);
    const naming = ((await adminCall('GET', '/api/naming-templates')).body as Array<{ id: string; name: string }>).find((entry) => entry.name === 'nightly names')!;
    expect(job.namingTemplateId).toBe(naming.id);
  });

  it('met the page rules: axe finds nothing serious, only the typed client calls the API, no secret comes back', async () => {
    await Promise.all(pending);
    expect(describeViolations(findings)).toEqual([]);
    expect(findings.length).toBeGreaterThanOrEqual(15 * 2);
    expect(cspErrors).toEqual([]);

    const origin = new URL(server.url).origin;
    const apiCalls = requests.filter((request) => request.url.pathname.startsWith('/api/'));
    expect(apiCalls.length).toBeGreaterThan(40);
    expect(requests.filter((request) => request.url.origin !== origin && request.url.protocol.startsWith('http')).map((r) => r.url.href)).toEqual([]);
    expect(apiCalls.filter((request) => !request.viaClient).map((request) => `${request.method} ${request.url.pathname} (${request.resourceType})`)).toEqual([]);
    // The recovery kit came through the typed client too.
    expect(apiCalls.some((request) => request.url.pathname === `/api/vault/${ids.vault}/recovery-kit` && request.viaClient)).toBe(true);

    expect(bodies.length).toBeGreaterThan(40);
    for (const body of bodies) {
      for (const secret of [ADMIN.password, PROFILE_PASSWORD, WEBHOOK_TOKEN]) expect(body.text.includes(secret), `${body.url} echoes a secret`).toBe(false);
      expect(body.text, `${body.url} carries a private key`).not.toMatch(/PRIVATE KEY/);
    }
  });
});
