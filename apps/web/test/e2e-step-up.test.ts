// End to end (issue 45.4): in Debian's Chromium against the assembled server, a user with TOTP deletes a backup on
// the Storage page; the server's 403 SECOND_FACTOR_REQUIRED opens the step-up dialog, a wrong code is refused and
// the file stays, a current code (independent RFC 6238 generator) confirms and the delete goes through.
import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type ServerHandle } from '@holdfast/server';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awayFromStepBoundary, secretOfUri, stepAt, totpForStep } from '@holdfast/tooling/harness/rfc6238';
import { CHROMIUM_ARGS, ensureWebBuilt, findChromium, WEB_ROOT } from './support/browser.js';

const ADMIN = { email: 'root@example.test', password: `pw-${Date.now()}-battery staple` };

const chromiumFound = await findChromium();
if ('reason' in chromiumFound) console.warn(`@holdfast/web step-up e2e skipped: ${chromiumFound.reason}`);
const suite = 'reason' in chromiumFound ? describe.skip : describe;

suite(`step-up before deleting a backup in Chromium${'reason' in chromiumFound ? ` (skipped: ${chromiumFound.reason})` : ''}`, () => {
  let server: ServerHandle;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let backups: string;
  let origin = '';

  beforeAll(async () => {
    ensureWebBuilt();
    dataDir = await mkdtemp(join(tmpdir(), 'holdfast-web-stepup-'));
    backups = await mkdtemp(join(tmpdir(), 'holdfast-web-stepup-backups-'));
    await writeFile(join(backups, 'nightly.sql.gz'), 'backup bytes');
    server = await startServer({
      env: {
        PORT: '0',
        HOLDFAST_DATA_DIR: dataDir,
        HOLDFAST_WEB_DIR: WEB_ROOT,
        HOLDFAST_LOCAL_ROOTS: tmpdir(),
        LOG_LEVEL: 'silent',
        HOLDFAST_ADMIN_EMAIL: ADMIN.email,
        HOLDFAST_ADMIN_PASSWORD: ADMIN.password,
      },
      host: '127.0.0.1',
    });
    origin = `http://localhost:${server.port}`;
    browser = await chromium.launch({ executablePath: (chromiumFound as { path: string }).path, args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('dialog', (dialog) => void dialog.accept());
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(backups, { recursive: true, force: true });
  });

  /** The page's own session, for the set-up calls made beside it (enrolling TOTP, adding the destination). */
  const adminCall = async (method: string, path: string, body?: unknown) => {
    const cookie = (await context.cookies(origin)).map((entry) => `${entry.name}=${entry.value}`).join('; ');
    const session = (await (await fetch(`${server.url}/api/auth/session`, { headers: { cookie } })).json()) as { csrfToken: string };
    const answer = await fetch(`${server.url}${path}`, {
      method,
      headers: { cookie, 'x-csrf-token': session.csrfToken, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: answer.status, body: (await answer.json().catch(() => null)) as any };
  };

  it('asks for the authenticator code when the server wants a fresh second factor, then deletes', async () => {
    await page.goto(`${origin}/sign-in`);
    await page.getByLabel(/^Email/).fill(ADMIN.email);
    await page.getByLabel(/^Password/).fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByTestId('sign-out').waitFor();

    const enrolled = await adminCall('POST', '/api/auth/two-factor/enroll', {});
    expect(enrolled.status).toBe(200);
    const secret = secretOfUri(enrolled.body.otpauthUri);
    await awayFromStepBoundary();
    const confirmStep = stepAt();
    expect((await adminCall('POST', '/api/auth/two-factor/confirm', { code: totpForStep(secret, confirmStep) })).status).toBe(200);
    const storage = await adminCall('POST', '/api/adapters', { name: 'disk', type: 'storage', adapterId: 'local', config: { path: backups } });
    expect(storage.status, JSON.stringify(storage.body)).toBe(201);

    await page.goto(`${origin}/storage?storage=${storage.body.id}`);
    const row = page.getByTestId('storage-row').filter({ hasText: 'nightly.sql.gz' });
    await row.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
    await dialog.waitFor();

    const wrong = totpForStep(secret, confirmStep + 1) === '000000' ? '111111' : '000000';
    await dialog.locator('[data-field="step-up-code"]').fill(wrong);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.getByRole('alert').waitFor();
    expect(existsSync(join(backups, 'nightly.sql.gz'))).toBe(true);

    await dialog.locator('[data-field="step-up-code"]').fill(totpForStep(secret, confirmStep + 1));
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect.poll(() => existsSync(join(backups, 'nightly.sql.gz'))).toBe(false);
    await expect.poll(() => row.count()).toBe(0);

    // Still fresh: a key that may delete backups is created from the form without asking again, and shows its badge.
    await page.goto(`${origin}/api-keys`);
    await page.locator('[data-field="key-name"]').fill('pruner');
    await page.locator('[data-field="key-permissions"]').click();
    await page.getByRole('option', { name: 'storage:delete', exact: true }).click();
    await page.keyboard.press('Escape');
    await page.locator('[data-field="key-allow-backup-deletion"]').check({ force: true });
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('issued-key').waitFor();
    const keys = (await adminCall('GET', '/api/api-keys')).body.apiKeys as Array<{ name: string; allowBackupDeletion: boolean }>;
    expect(keys.find((key) => key.name === 'pruner')?.allowBackupDeletion).toBe(true);
    await page.getByText('may delete backups', { exact: true }).waitFor();
  }, 120_000);
});
