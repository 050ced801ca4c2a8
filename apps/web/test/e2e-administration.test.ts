// End to end, issue 47 item 5 (administration): the built web app in Debian's Chromium against the assembled server
// on the embedded database.
// - The audit log names who acted (user or API key name) and the resource, filters by who, action and date range,
//   and downloads the filtered log as CSV.
// - A failed sign-in appears in the audit log with the email tried and never the password.
// - A user changes their own password on the profile page; the old one is refused afterwards.
// - An administrator disables a user (their sign-in is refused), resets a user's second factor, and cannot remove
//   their own last administrator rights or disable themself (the server's message is shown).
// - An API key is created with an expiry date and a permission preset.
// - axe: no serious or critical violation on the pages and dialogs involved, light and dark.
import 'reflect-metadata';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerHandle } from '@holdfast/server';
import { secretOfUri, stepAt, totpForStep } from '@holdfast/tooling/harness/rfc6238';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureWebBuilt, findChromium } from './support/browser.js';
import { captureHere, describeViolations, type AxeFinding } from './support/pages.js';
import { signInCaller, useSessionIn, type SessionCaller } from './support/sessions.js';
import { startWebStack } from './support/web-stack.js';

const SHOTS = fileURLToPath(new URL('../test-results/screenshots', import.meta.url));
const STAMP = `${Date.now()}`;
const ADMIN = { email: 'boss@example.test', password: `pw-${STAMP}-steady keel` };
const MIA = { name: 'Mia Member', email: 'mia@example.test', password: `pw-${STAMP}-mia first` };
const TOM = { name: 'Tom Target', email: 'tom@example.test', password: `pw-${STAMP}-tom pass` };
const SUE = { name: 'Sue Second', email: 'sue@example.test', password: `pw-${STAMP}-sue pass` };
const WRONG_PASSWORD = `typo-${STAMP}-never-stored`;

const chromiumFound = await findChromium();
if ('reason' in chromiumFound) console.warn(`@holdfast/web administration e2e skipped: ${chromiumFound.reason}`);
const suite = 'reason' in chromiumFound ? describe.skip : describe;

/** A calendar day in the browser's (and this process's) time zone, as a date input holds it. */
function localDay(offsetDays = 0): string {
  const day = new Date(Date.now() + offsetDays * 86_400_000);
  return `${day.getFullYear()}-${String(day.getMonth() + 1).padStart(2, '0')}-${String(day.getDate()).padStart(2, '0')}`;
}

suite(`administration in Chromium (issue 47.5)${'reason' in chromiumFound ? ` (skipped: ${chromiumFound.reason})` : ''}`, () => {
  let server: ServerHandle;
  let browser: Browser;
  let dataDir: string;
  let admin: SessionCaller;
  const findings: AxeFinding[] = [];
  const contexts: BrowserContext[] = [];
  const users: Record<string, string> = {};

  /** A fresh browser context, signed in as `caller` when given. */
  const newPage = async (caller?: SessionCaller): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    contexts.push(context);
    if (caller) await useSessionIn(context, server.url, caller);
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    return page;
  };
  const go = async (page: Page, path: string) => {
    await page.goto(`${server.url}${path}`);
    await page.waitForLoadState('networkidle');
  };
  const field = (page: Page, name: string) => page.locator(`[data-field="${name}"]`);
  const pick = async (page: Page, name: string, option: string) => {
    await field(page, name).click();
    await page.getByRole('option', { name: option, exact: true }).click();
  };
  const signInThroughForm = async (page: Page, email: string, password: string) => {
    await go(page, '/sign-in');
    await page.getByLabel(/^Email/).fill(email);
    await page.getByLabel(/^Password/).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  };
  const apiSignIn = async (email: string, password: string) =>
    (await fetch(`${server.url}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) })).status;
  /** Opens the row menu of a user on /users and picks an action; the confirmation dialog opens. */
  const userAction = async (page: Page, name: string, action: string) => {
    await page.getByRole('button', { name: `Actions for ${name}` }).click();
    await page.getByRole('menuitem', { name: action, exact: true }).click();
    return page.getByRole('dialog');
  };

  beforeAll(async () => {
    ensureWebBuilt();
    await mkdir(SHOTS, { recursive: true });
    dataDir = await mkdtemp(join(tmpdir(), 'holdfast-web-administration-'));
    ({ server, browser, admin } = await startWebStack({ dataDir, chromiumPath: (chromiumFound as { path: string }).path, admin: ADMIN }));
    // Many sign-ins from one address follow: lift the auth and mutation limits as an operator would.
    expect((await admin.call('PUT', '/api/settings', { authPoints: 1_000, mutationPoints: 1_000, apiPoints: 5_000 })).status).toBe(200);
    const group = await admin.call('POST', '/api/groups', { name: 'Watchers', permissions: ['dashboard:read', 'jobs:read', 'history:read'] });
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    for (const person of [MIA, TOM, SUE]) {
      const made = await admin.call('POST', '/api/users', { ...person, groupId: group.body.id });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      users[person.email] = made.body.id;
    }
    // Settings are re-read within 5 s.
    await new Promise((resolve) => setTimeout(resolve, 5_500));
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a failed sign-in appears in the audit log with the email tried, never the password', async () => {
    const visitor = await newPage();
    await signInThroughForm(visitor, MIA.email, WRONG_PASSWORD);
    await expect.poll(() => visitor.getByRole('alert').textContent()).toMatch(/Sign-in failed/);

    const page = await newPage(admin);
    const bodies: string[] = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname.startsWith('/api/')) void response.text().then((text) => bodies.push(text), () => undefined);
    });
    await go(page, '/audit');
    await pick(page, 'audit-action', 'login.failed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => page.getByTestId('audit-total').textContent()).toBe('1 entry');
    const row = page.getByTestId('audit-row');
    expect(await row.getByTestId('audit-actor').textContent()).toContain(MIA.email);
    expect(await row.textContent()).toContain('wrong-password');
    expect(await page.content()).not.toContain(WRONG_PASSWORD);
    await page.waitForLoadState('networkidle');
    expect(bodies.length).toBeGreaterThan(0);
    expect(bodies.filter((text) => text.includes(WRONG_PASSWORD))).toEqual([]);
  });

  it('the audit log shows who acted (user or API key) and the resource, filters by who, action and date range, and downloads CSV', async () => {
    const issued = await admin.call('POST', '/api/api-keys', { name: 'ci-robot', permissions: ['api-keys:write', 'audit:read'] });
    expect(issued.status).toBe(201);
    const byKey = await fetch(`${server.url}/api/api-keys/${issued.body.apiKey.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${issued.body.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: true }),
    });
    expect(byKey.status).toBe(200);
    const adminName = ADMIN.email.split('@')[0]!;

    const page = await newPage(admin);
    await go(page, '/audit');
    expect(await page.getByRole('columnheader', { name: 'Who' }).count()).toBe(1);
    const actors = await page.getByTestId('audit-actor').allTextContents();
    expect(actors.some((text) => text.includes('ci-robot') && text.includes('API key'))).toBe(true);
    expect(actors.some((text) => text.includes(adminName) && text.includes('user'))).toBe(true);
    // Resource names, not bare ids: the users created in set-up are named by their email.
    const resources = await page.getByTestId('audit-resource').allTextContents();
    expect(resources.some((text) => text.includes(TOM.email))).toBe(true);

    // Who: the key's entries only.
    await field(page, 'audit-actor').fill('CI-ROBOT');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => page.getByTestId('audit-total').textContent()).toBe('1 entry');
    expect(await page.getByTestId('audit-row').textContent()).toMatch(/ci-robot.*api-key\.toggle.*ci-robot/);

    // CSV of what is shown: the header and the one entry.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('audit-export').click()]);
    expect(download.suggestedFilename()).toMatch(/^holdfast-audit-\d{4}-\d{2}-\d{2}\.csv$/);
    const saved = join(dataDir, 'audit.csv');
    await download.saveAs(saved);
    const lines = (await readFile(saved, 'utf8')).trimEnd().split('\r\n');
    expect(lines[0]).toBe('time,actor,actorType,userId,action,resource,resourceId,resourceName,ipAddress,userAgent,details');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(',ci-robot,api-key,');
    expect(lines[1]).toContain(',api-key.toggle,api-key,');

    // Action plus who: the administrator created three users.
    await field(page, 'audit-actor').fill(adminName);
    await pick(page, 'audit-action', 'CREATE');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(async () => (await page.getByTestId('audit-resource').allTextContents()).filter((text) => text.endsWith('user')).length).toBeGreaterThanOrEqual(3);
    for (const text of await page.getByTestId('audit-actor').allTextContents()) expect(text).toContain(adminName);

    // Date range: today has entries; a range starting tomorrow has none; an inverted range is refused in the form.
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await field(page, 'audit-from').fill(localDay());
    await field(page, 'audit-to').fill(localDay());
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(async () => Number.parseInt((await page.getByTestId('audit-total').textContent()) ?? '0', 10)).toBeGreaterThan(5);
    await field(page, 'audit-from').fill(localDay(1));
    await field(page, 'audit-to').fill('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => page.getByText('No audit entries match these filters.').count()).toBe(1);
    await field(page, 'audit-to').fill(localDay());
    expect(await page.getByText('The end date is before the start date').count()).toBe(1);
    await field(page, 'audit-from').fill('');
    await field(page, 'audit-to').fill('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => page.getByTestId('audit-row').count()).toBeGreaterThan(5);
    await captureHere(page, SHOTS, 'administration-audit', findings);
  });

  it('a user changes their own password on the profile page; the old one is refused afterwards', async () => {
    const mia = await signInCaller(server.url, MIA.email, MIA.password);
    const page = await newPage(mia);
    await go(page, '/profile');
    const form = page.getByRole('form', { name: 'Change password' });
    const newPassword = `pw-${STAMP}-mia second`;
    await form.getByLabel(/^Current password/).fill('not my password');
    await form.getByLabel(/^New password/).fill(newPassword);
    await form.getByLabel(/^Repeat the new password/).fill(newPassword);
    await form.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toMatch(/current password is not correct/);

    await form.getByLabel(/^Current password/).fill(MIA.password);
    await form.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => page.getByText('Password changed. Your other sessions were signed out.').count()).toBe(1);
    await captureHere(page, SHOTS, 'administration-profile', findings);

    expect(await apiSignIn(MIA.email, MIA.password)).toBe(401);
    const visitor = await newPage();
    await signInThroughForm(visitor, MIA.email, MIA.password);
    await expect.poll(() => visitor.getByRole('alert').textContent()).toMatch(/Sign-in failed/);
    expect(await visitor.getByTestId('sign-out').count()).toBe(0);
    await signInThroughForm(visitor, MIA.email, newPassword);
    await visitor.getByTestId('sign-out').waitFor();
    const audited = (await admin.call('GET', '/api/audit?action=user.password-change')).body.entries;
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({ actorName: MIA.name, resourceName: MIA.email });
  });

  it('an administrator disables a user: the user is signed out and their sign-in is refused', async () => {
    const tom = await signInCaller(server.url, TOM.email, TOM.password);
    const page = await newPage(admin);
    await go(page, '/users');
    const dialog = await userAction(page, TOM.name, 'Disable');
    expect(await dialog.textContent()).toMatch(/cannot sign in/);
    await captureHere(page, SHOTS, 'administration-users-disable', findings, '[role="dialog"]');
    await dialog.getByRole('button', { name: 'Disable user' }).click();
    const row = page.getByTestId('user-row').filter({ hasText: TOM.email });
    await expect.poll(() => row.getByTestId('user-status').textContent()).toContain('disabled');

    expect((await tom.call('GET', '/api/users/me')).status).toBe(401);
    const visitor = await newPage();
    await signInThroughForm(visitor, TOM.email, TOM.password);
    await expect.poll(() => visitor.getByRole('alert').textContent()).toMatch(/This account is disabled/);
    expect(await visitor.getByTestId('sign-out').count()).toBe(0);

    // Enabling again lets them in.
    const again = await userAction(page, TOM.name, 'Enable');
    await again.getByRole('button', { name: 'Enable user' }).click();
    await expect.poll(() => row.getByTestId('user-status').textContent()).toContain('active');
    expect(await apiSignIn(TOM.email, TOM.password)).toBe(200);
  });

  it("an administrator resets a user's second factor: the next sign-in needs only the password", async () => {
    const sue = await signInCaller(server.url, SUE.email, SUE.password);
    const enrollment = await sue.call('POST', '/api/auth/two-factor/enroll', {});
    expect(enrollment.status, JSON.stringify(enrollment.body)).toBe(200);
    const confirmed = await sue.call('POST', '/api/auth/two-factor/confirm', { code: totpForStep(secretOfUri(enrollment.body.otpauthUri), stepAt()) });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    const challenged = await fetch(`${server.url}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: SUE.email, password: SUE.password }) });
    expect(((await challenged.json()) as { twoFactorRequired?: boolean }).twoFactorRequired).toBe(true);

    const page = await newPage(admin);
    await go(page, '/users');
    const row = page.getByTestId('user-row').filter({ hasText: SUE.email });
    expect(await row.getByTestId('user-status').textContent()).toContain('second factor');
    const dialog = await userAction(page, SUE.name, 'Reset second factor');
    await dialog.getByRole('button', { name: 'Reset second factor' }).click();
    await expect.poll(() => row.getByTestId('user-status').textContent()).not.toContain('second factor');

    const visitor = await newPage();
    await signInThroughForm(visitor, SUE.email, SUE.password);
    await visitor.getByTestId('sign-out').waitFor();
    expect(await visitor.getByText(/authenticator/i).count()).toBe(0);
    const audited = (await admin.call('GET', '/api/audit?action=user.second-factor-reset')).body.entries;
    expect(audited[0]).toMatchObject({ resourceName: SUE.email, resourceId: users[SUE.email] });
  });

  it('an administrator cannot remove their own last administrator rights or disable themself: the message is shown', async () => {
    const page = await newPage(admin);
    await go(page, '/users');
    const me = ADMIN.email.split('@')[0]!;
    const demote = await userAction(page, me, 'Remove administrator rights');
    await demote.getByRole('button', { name: 'Remove administrator rights' }).click();
    await expect.poll(() => demote.getByRole('alert').textContent()).toMatch(/last enabled super administrator/);
    await captureHere(page, SHOTS, 'administration-users-last-admin', findings, '[role="dialog"]');
    await demote.getByRole('button', { name: 'Cancel' }).click();

    const disable = await userAction(page, me, 'Disable');
    await disable.getByRole('button', { name: 'Disable user' }).click();
    await expect.poll(() => disable.getByRole('alert').textContent()).toMatch(/You cannot disable your own account/);
    await disable.getByRole('button', { name: 'Cancel' }).click();
    const session = (await admin.call('GET', '/api/auth/session')).body;
    expect(session).toMatchObject({ isSuperAdmin: true, user: { disabled: false } });
    await captureHere(page, SHOTS, 'administration-users', findings);
  });

  it('creates an API key with an expiry date and a permission preset', async () => {
    const page = await newPage(admin);
    await go(page, '/api-keys');
    await field(page, 'key-name').fill('monitoring');
    await pick(page, 'key-preset', 'Read-only');
    const presets = (await admin.call('GET', '/api/permissions')).body.presets as Array<{ id: string; permissions: string[] }>;
    const readOnly = presets.find((preset) => preset.id === 'read-only')!.permissions;
    // A day in the past is refused in the form.
    await field(page, 'key-expiry').fill(localDay(-1));
    await page.getByRole('button', { name: 'Create key' }).click();
    expect(await page.getByText('Choose today or a later day').count()).toBe(1);
    const expiryDay = localDay(30);
    await field(page, 'key-expiry').fill(expiryDay);
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('issued-key').waitFor();

    const key = ((await admin.call('GET', '/api/api-keys')).body.apiKeys as Array<{ name: string; permissions: string[]; expiresAt: string | null }>).find((entry) => entry.name === 'monitoring')!;
    expect([...key.permissions].sort()).toEqual([...readOnly].sort());
    expect(key.expiresAt).toBe(new Date(`${expiryDay}T23:59:59.999`).toISOString());
    const row = page.getByRole('row').filter({ hasText: 'monitoring' });
    const shown = await row.getByTestId('key-expiry').textContent();
    expect(shown).not.toBe('never');
    expect(shown).toContain(String(new Date(key.expiresAt!).getFullYear()));
    expect(shown).not.toContain('expired');
    await captureHere(page, SHOTS, 'administration-api-keys', findings);
  });

  it('axe: no serious or critical violation on the administration pages and dialogs, light and dark', () => {
    expect(findings.length).toBeGreaterThanOrEqual(10);
    expect(describeViolations(findings)).toEqual([]);
  });
});
