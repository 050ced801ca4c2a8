// End to end: the sign-in methods beyond the password in Debian's Chromium (playwright-core) against the assembled
// server on the embedded database. TOTP enrolled through the Security page with codes from an independent RFC 6238
// generator (not the server's library), the second step at sign-in, backup codes (once each), re-authentication;
// a passkey registered and used through Chromium's virtual authenticator (DevTools WebAuthn domain), as the second
// factor and passwordless; the single sign-on admin page; OIDC sign-in against a real OpenID Provider (`oidc-provider`)
// through the sign-in button and through OIDC_AUTO_REDIRECT; the password form hidden under DISABLE_EMAIL_LOGIN.
// Screenshots and axe scans of the new pages, and the page rules of e2e.test.ts (typed client only, no secrets).
import 'reflect-metadata';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type ServerHandle } from '@holdfast/server';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startOpenIdProvider, type TestOpenIdProvider } from '@holdfast/tooling/harness/oidc-provider';
import { awayFromStepBoundary, stepAt, totpForStep } from '@holdfast/tooling/harness/rfc6238';
import { CHROMIUM_ARGS, ensureWebBuilt, findChromium, WEB_ROOT } from './support/browser.js';
import { captureHere, describeViolations, recordTraffic, type AxeFinding, type SeenBody, type SeenRequest } from './support/pages.js';

const SHOTS = fileURLToPath(new URL('../test-results/screenshots', import.meta.url));
const ADMIN = { email: 'root@example.test', password: `pw-${Date.now()}-battery staple` };
const BOB = { sub: 'bob-0001', email: 'bob@example.test', emailVerified: true, name: 'Bob from Corp', groups: ['ops', 'staff'] };

const chromiumFound = await findChromium();
if ('reason' in chromiumFound) console.warn(`@holdfast/web sign-in methods e2e skipped: ${chromiumFound.reason}`);
const suite = 'reason' in chromiumFound ? describe.skip : describe;

suite(`sign-in methods in Chromium${'reason' in chromiumFound ? ` (skipped: ${chromiumFound.reason})` : ''}`, () => {
  let server: ServerHandle;
  let idp: TestOpenIdProvider;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId = '';
  let dataDir: string;
  /** Passkeys are bound to a host name (an IP address is no valid relying party id), so the browser uses localhost. */
  let origin = '';
  let liftedAt = 0;
  /** The second server (DISABLE_EMAIL_LOGIN) the browser visits. */
  let lockedOrigin = '';
  const requests: SeenRequest[] = [];
  const bodies: SeenBody[] = [];
  const pending: Promise<unknown>[] = [];
  const findings: AxeFinding[] = [];
  const cspErrors: string[] = [];
  const state = { totpSecret: '', confirmStep: 0, backupCodes: [] as string[], newBackupCodes: [] as string[], groupId: '' };

  beforeAll(async () => {
    ensureWebBuilt();
    await mkdir(SHOTS, { recursive: true });
    dataDir = await mkdtemp(join(tmpdir(), 'holdfast-web-signin-'));
    server = await startServer({
      env: {
        PORT: '0',
        HOLDFAST_DATA_DIR: dataDir,
        HOLDFAST_WEB_DIR: WEB_ROOT,
        LOG_LEVEL: 'silent',
        HOLDFAST_ADMIN_EMAIL: ADMIN.email,
        HOLDFAST_ADMIN_PASSWORD: ADMIN.password,
        // Names a provider the test creates later: until it exists and is enabled, the sign-in page stays put.
        OIDC_AUTO_REDIRECT: 'corp',
      },
      host: '127.0.0.1',
    });
    origin = `http://localhost:${server.port}`;
    idp = await startOpenIdProvider(() => [`${origin}/api/auth/sso/oidc/corp/callback`]);
    idp.accounts.set(BOB.sub, BOB);
    idp.loginAs = BOB.sub;
    browser = await chromium.launch({ executablePath: (chromiumFound as { path: string }).path, args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    watch(page);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await idp?.close();
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  afterEach(async (test) => {
    if (test.task.result?.state === 'fail') await page?.screenshot({ path: join(SHOTS, `failed-signin-${test.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
  });

  function watch(target: Page) {
    recordTraffic(target, requests, bodies, pending);
    target.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) cspErrors.push(message.text());
    });
  }
  const go = async (path: string, on = page) => {
    await on.goto(`${origin}${path}`);
    await on.waitForLoadState('networkidle');
  };
  const capture = async (name: string, path: string, on = page) => {
    await go(path, on);
    await captureHere(on, SHOTS, name, findings);
  };
  const field = (name: string, on = page) => on.locator(`[data-field="${name}"]`);
  const dashboard = (on = page) => on.getByRole('heading', { name: 'Dashboard' }).waitFor();
  /** Signed in: the shell with its sign-out button (the page lands wherever `next` pointed). */
  const signedIn = () => page.getByTestId('sign-out').waitFor();
  const signOut = async () => {
    await page.getByTestId('sign-out').click();
    await page.waitForURL(/\/sign-in/);
  };
  const password = async () => {
    await page.getByLabel(/^Email/).fill(ADMIN.email);
    await page.getByLabel(/^Password/).fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  };
  /** The admin's session as a cookie header, for the few set-up calls made beside the page (rate limits, a group). */
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
  const codeAt = (step: number) => totpForStep(state.totpSecret, step);

  it('signs in with the password and turns TOTP on with a code from an independent RFC 6238 generator', async () => {
    await go('/sign-in');
    await password();
    await dashboard();
    // Many sign-ins from one address follow; lift the limits the way an operator would (they apply within 5 s).
    expect((await adminCall('PUT', '/api/settings', { authPoints: 10_000, apiPoints: 100_000, mutationPoints: 100_000 })).status).toBe(200);
    liftedAt = Date.now();

    await go('/profile/security');
    await expect.poll(() => page.getByTestId('two-factor-status').textContent()).toBe('Off');
    await page.getByRole('button', { name: 'Set up authenticator app' }).click();
    await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
    expect(await page.getByTestId('qr-code').locator('path').getAttribute('d')).toMatch(/^M\d+ \d+h1v1h-1z/);
    state.totpSecret = (await page.getByTestId('totp-manual-key').textContent())!.replace(/\s+/g, '');
    expect(state.totpSecret).toMatch(/^[A-Z2-7]{32}$/);
    await captureHere(page, SHOTS, 'security-totp-setup', findings);

    // A wrong first code is refused where it was typed, and nothing is turned on.
    const wrong = String((Number(codeAt(stepAt())) + 1) % 1_000_000).padStart(6, '0');
    await field('totp-confirm-code').fill(wrong);
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByRole('alert').filter({ hasText: 'Not turned on' }).waitFor();

    await awayFromStepBoundary();
    state.confirmStep = stepAt();
    await field('totp-confirm-code').fill(codeAt(state.confirmStep));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByTestId('backup-codes').waitFor();
    state.backupCodes = (await page.getByTestId('backup-code').allTextContents()).map((code) => code.trim());
    expect(state.backupCodes).toHaveLength(10);
    expect(new Set(state.backupCodes).size).toBe(10);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-backup-codes').click()]);
    const saved = join(dataDir, 'backup-codes.txt');
    await download.saveAs(saved);
    const file = await readFile(saved, 'utf8');
    for (const code of state.backupCodes) expect(file).toContain(code);
    await page.getByRole('button', { name: 'I have saved them' }).click();
    expect(await page.getByTestId('backup-code').count()).toBe(0);
    await expect.poll(() => page.getByTestId('two-factor-status').textContent()).toBe('On');

    // Shown once: a fresh visit has no codes on the page.
    await go('/profile/security');
    await page.getByTestId('backup-codes-remaining').filter({ hasText: '10 of 10' }).waitFor();
    expect(await page.content()).not.toContain(state.backupCodes[0]);
  });

  it('asks for the second step after the password: a replayed code is refused, a fresh one signs in', async () => {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, liftedAt + 5_500 - Date.now())));
    await signOut();
    await password();
    await page.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
    await captureHere(page, SHOTS, 'sign-in-second-step', findings);
    // The code that turned TOTP on was used: the same code again is a replay.
    await field('second-factor-code').fill(codeAt(state.confirmStep));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').filter({ hasText: 'Not signed in' }).waitFor();
    // The next step's code: within the one-step window whether or not the clock has moved on since.
    await field('second-factor-code').fill(codeAt(state.confirmStep + 1));
    await page.getByRole('button', { name: 'Verify' }).click();
    await signedIn();
  });

  it('a backup code signs in once, and only once', async () => {
    await signOut();
    await password();
    await page.getByRole('button', { name: 'Use a backup code instead' }).click();
    await field('second-factor-backup-code').fill(state.backupCodes[0]!);
    await page.getByRole('button', { name: 'Verify' }).click();
    await signedIn();

    await signOut();
    await password();
    await page.getByRole('button', { name: 'Use a backup code instead' }).click();
    await field('second-factor-backup-code').fill(state.backupCodes[0]!);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').filter({ hasText: 'Not signed in' }).waitFor();
    await field('second-factor-backup-code').fill(state.backupCodes[1]!);
    await page.getByRole('button', { name: 'Verify' }).click();
    await signedIn();
    await go('/profile/security');
    await page.getByTestId('backup-codes-remaining').filter({ hasText: '8 of 10' }).waitFor();
  });

  it('replaces the backup codes only after re-authentication', async () => {
    await page.getByRole('button', { name: 'New backup codes' }).click();
    const dialog = page.getByRole('dialog', { name: 'New backup codes' });
    await field('reauth-password').fill('not the password at all');
    await dialog.getByRole('button', { name: 'Make new codes' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'Not confirmed' }).waitFor();
    await captureHere(page, SHOTS, 'security-reauth', findings, '[role="dialog"]');
    await field('reauth-password').fill(ADMIN.password);
    await dialog.getByRole('button', { name: 'Make new codes' }).click();
    await page.getByTestId('backup-codes').waitFor();
    state.newBackupCodes = (await page.getByTestId('backup-code').allTextContents()).map((code) => code.trim());
    expect(state.newBackupCodes).toHaveLength(10);
    expect(state.newBackupCodes.filter((code) => state.backupCodes.includes(code))).toEqual([]);
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByTestId('backup-codes-remaining').filter({ hasText: '10 of 10' }).waitFor();
  });

  it("registers a passkey in Chromium's virtual authenticator, renames it and asks for it after the password", async () => {
    cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    }));
    await go('/profile/security');
    await page.getByText('No passkeys yet.').waitFor();
    await field('passkey-name').fill('Virtual key');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    const row = page.getByTestId('passkey-row');
    await row.filter({ hasText: 'Virtual key' }).waitFor();
    // The virtual authenticator is a platform one without backup: a single-device, not backed-up credential.
    expect(await row.textContent()).toContain('This device only');
    expect(await row.getByText('no', { exact: true }).count()).toBe(1);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);

    await page.getByRole('button', { name: 'Rename Virtual key' }).click();
    await field('passkey-rename').fill('Chromium virtual key');
    await page.getByRole('button', { name: 'Save name' }).click();
    await row.filter({ hasText: 'Chromium virtual key' }).waitFor();

    // Controlled by the server's answer: the switch flips once the setting is stored.
    await field('passkey-two-factor').click();
    await expect.poll(() => field('passkey-two-factor').isChecked()).toBe(true);
    await capture('security', '/profile/security');
  });

  it('takes the passkey as the second factor after the password', async () => {
    const before = (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials[0]!.signCount;
    await signOut();
    await password();
    await page.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await signedIn();
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials[0]!.signCount).toBeGreaterThan(before);
  });

  it('signs in passwordless with the passkey', async () => {
    await signOut();
    await page.getByRole('button', { name: 'Continue with a passkey' }).click();
    await signedIn();
    const session = await adminCall('GET', '/api/auth/session');
    expect(session.body.user.email).toBe(ADMIN.email);
  });

  it('turns TOTP off after re-authentication, deletes the passkey, and a deleted passkey no longer signs in', async () => {
    await go('/profile/security');
    await page.getByRole('button', { name: 'Turn off' }).click();
    const dialog = page.getByRole('dialog', { name: 'Turn off two-factor sign-in' });
    // A current code is the other accepted proof. Codes up to confirmStep + 1 are used up: the next one must be in
    // the window of now, so the clock must have reached at least confirmStep + 1.
    await dialog.getByText('Authenticator code').click();
    while (stepAt() < state.confirmStep + 1) await new Promise((resolve) => setTimeout(resolve, 500));
    await awayFromStepBoundary();
    await field('reauth-code').fill(codeAt(Math.max(stepAt(), state.confirmStep + 2)));
    await dialog.getByRole('button', { name: 'Turn off' }).click();
    await expect.poll(() => page.getByTestId('two-factor-status').textContent()).toBe('Off');

    page.once('dialog', (confirm) => void confirm.accept());
    await page.getByRole('button', { name: 'Delete Chromium virtual key' }).click();
    await page.getByText('No passkeys yet.').waitFor();
    await expect.poll(() => field('passkey-two-factor').isChecked()).toBe(false);

    await signOut();
    await page.getByRole('button', { name: 'Continue with a passkey' }).click();
    await page.getByRole('alert').filter({ hasText: 'Passkey sign-in failed' }).waitFor();
    await password();
    await signedIn();
  });

  it('with DISABLE_EMAIL_LOGIN the sign-in page has no password form, and the server refuses passwords', async () => {
    const otherDir = await mkdtemp(join(tmpdir(), 'holdfast-web-nopw-'));
    const locked = await startServer({
      env: { PORT: '0', HOLDFAST_DATA_DIR: otherDir, HOLDFAST_WEB_DIR: WEB_ROOT, LOG_LEVEL: 'silent', DISABLE_EMAIL_LOGIN: 'true', HOLDFAST_ADMIN_EMAIL: ADMIN.email, HOLDFAST_ADMIN_PASSWORD: ADMIN.password },
      host: '127.0.0.1',
    });
    lockedOrigin = `http://localhost:${locked.port}`;
    // Its own browser profile: cookies are per host, not per port, and this server knows none of the other's.
    const otherContext = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const other = await otherContext.newPage();
    watch(other);
    try {
      await other.goto(`${lockedOrigin}/sign-in`);
      await other.getByTestId('email-login-off').waitFor();
      expect(await other.getByLabel(/^Password/).count()).toBe(0);
      expect(await other.getByLabel(/^Email/).count()).toBe(0);
      await other.getByRole('button', { name: 'Continue with a passkey' }).waitFor();
      await captureHere(other, SHOTS, 'sign-in-email-login-off', findings);
      const refused = await fetch(`${locked.url}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
      expect(refused.status).toBe(403);
    } finally {
      await otherContext.close();
      await locked.close();
      await rm(otherDir, { recursive: true, force: true });
    }
  });

  it('manages single sign-on providers on the settings page (secret write-only, group mapping, enable, delete)', async () => {
    // dashboard:read so an SSO user lands on the dashboard (without it the app opens the first page they may use).
    const group = await adminCall('POST', '/api/groups', { name: 'Operators', permissions: ['dashboard:read', 'jobs:read', 'history:read'] });
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    state.groupId = group.body.id;
    await capture('sso-providers-empty', '/settings/sso');
    await page.getByText('No single sign-on providers yet.').waitFor();

    await page.getByRole('link', { name: 'Add provider' }).click();
    await page.getByRole('heading', { name: 'Add single sign-on provider' }).waitFor();
    // Checked before anything is sent: the provider id rule and the protocol's required fields.
    await field('sso-providerId').fill('Corp!');
    await page.getByRole('button', { name: 'Add provider' }).click();
    await expect.poll(() => field('sso-providerId').getAttribute('aria-invalid')).toBe('true');
    await expect.poll(() => field('sso-issuer').getAttribute('aria-invalid')).toBe('true');
    await field('sso-providerId').fill('corp');
    await field('sso-name').fill('Corp SSO');
    await field('sso-allowProvisioning').check();
    await field('sso-issuer').fill(idp.issuer);
    await field('sso-clientId').fill(idp.clientId);
    await field('sso-clientSecret').fill(idp.clientSecret);
    await field('sso-scopes').fill('openid email profile groups');
    await field('sso-groupClaim').fill('groups');
    await page.getByRole('button', { name: 'Add mapping' }).click();
    await field('mapping-value-0').fill('ops');
    await field('mapping-group-0').click();
    await page.getByRole('option', { name: 'Operators', exact: true }).click();
    expect(await page.getByTestId('oidc-redirect-uri').textContent()).toBe(`${origin}/api/auth/sso/oidc/corp/callback`);
    await captureHere(page, SHOTS, 'sso-provider-new', findings);
    await page.getByRole('button', { name: 'Add provider' }).click();
    await page.getByTestId('sso-provider-row').filter({ hasText: 'Corp SSO' }).waitFor();
    // OIDC_AUTO_REDIRECT=corp names it, and it is enabled: the list says so.
    await page.getByTestId('auto-redirect-badge').waitFor();

    await page.getByRole('link', { name: 'Add provider' }).click();
    await page.getByText('SAML 2.0', { exact: true }).click();
    await field('sso-providerId').fill('adfs');
    await field('sso-name').fill('ADFS');
    await field('sso-samlEntryPoint').fill('https://adfs.example.test/adfs/ls/');
    await field('sso-samlCertificate').fill('MIIBfakeCertificateForTheFormOnly');
    await field('sso-attributeEmail').fill('http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress');
    await page.getByRole('button', { name: 'Add provider' }).click();
    await page.getByTestId('sso-provider-row').filter({ hasText: 'ADFS' }).waitFor();
    // A switch without a visible label: its track (inside the same <label>) lies over the hidden checkbox.
    await page.getByRole('switch', { name: 'Enable ADFS' }).click({ force: true });
    await expect.poll(async () => (await adminCall('GET', '/api/auth/sso/providers')).body.providers.map((p: { providerId: string }) => p.providerId)).toEqual(['corp']);
    page.once('dialog', (confirm) => void confirm.accept());
    await page.getByRole('button', { name: 'Delete ADFS' }).click();
    await expect.poll(() => page.getByTestId('sso-provider-row').count()).toBe(1);

    // Editing shows the stored secret as "stored", never its value, and keeps it when left empty.
    await page.getByRole('link', { name: 'Edit Corp SSO' }).click();
    await expect.poll(() => field('sso-clientSecret').getAttribute('placeholder')).toMatch(/stored/);
    expect(await field('sso-clientSecret').inputValue()).toBe('');
    expect(await field('mapping-value-0').inputValue()).toBe('ops');
    const editPath = new URL(page.url()).pathname;
    await page.getByRole('button', { name: 'Save provider' }).click();
    await page.getByTestId('sso-provider-row').filter({ hasText: 'Corp SSO' }).waitFor();
    await capture('sso-providers', '/settings/sso');
    await capture('sso-provider-edit', editPath);
  });

  it('signs in through the OIDC provider with the sign-in button, and OIDC_AUTO_REDIRECT goes there by itself', async () => {
    // A second browser profile: nobody signed in there, so the sign-in page is what a new visitor sees.
    const visitorContext = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const visitor = await visitorContext.newPage();
    watch(visitor);
    try {
      // ?local=1 stays on the page despite the automatic redirect: password, passkey and the provider's button.
      await capture('sign-in-methods', '/sign-in?local=1', visitor);
      await visitor.getByLabel(/^Password/).waitFor();
      const button = visitor.getByRole('link', { name: 'Continue with Corp SSO' });
      expect(await button.getAttribute('href')).toBe('/api/auth/sso/oidc/corp/start?redirectTo=%2F');
      await button.click();
      await dashboard(visitor);
      expect(new URL(visitor.url()).origin).toBe(origin);
      await visitor.getByRole('link', { name: BOB.name }).waitFor();
      // First sign-in provisioned Bob (provisioning on) and mapped his "ops" group to Operators.
      const users = await adminCall('GET', '/api/users');
      const bob = (users.body.users ?? users.body).find((user: { email: string }) => user.email === BOB.email);
      expect(bob).toMatchObject({ name: BOB.name, groupId: state.groupId });

      // Signing out lands on /sign-in, which OIDC_AUTO_REDIRECT sends straight to the provider and back.
      const started = visitor.waitForRequest((request) => request.url() === `${origin}/api/auth/sso/oidc/corp/start?redirectTo=%2F`);
      const landed = visitor.waitForResponse((response) => response.url().startsWith(`${origin}/api/auth/sso/oidc/corp/callback?`));
      await visitor.getByTestId('sign-out').click();
      await started;
      expect((await landed).status()).toBe(303);
      await visitor.waitForLoadState('networkidle');
      await dashboard(visitor);
      await visitor.getByRole('link', { name: BOB.name }).waitFor();
    } finally {
      await visitorContext.close();
    }
  });

  it('met the page rules: axe finds nothing serious, only the typed client calls the API, no secret comes back', async () => {
    await Promise.all(pending);
    expect(describeViolations(findings)).toEqual([]);
    expect(findings.length).toBeGreaterThanOrEqual(10 * 2);
    expect(cspErrors).toEqual([]);

    const idpOrigin = new URL(idp.issuer).origin;
    const apiCalls = requests.filter((request) => request.url.pathname.startsWith('/api/') && request.url.origin !== idpOrigin);
    expect(apiCalls.length).toBeGreaterThan(50);
    // Same origin, except the identity provider the browser is sent to during single sign-on.
    const elsewhere = requests.filter((request) => request.url.protocol.startsWith('http') && ![origin, lockedOrigin, idpOrigin].includes(request.url.origin));
    expect(elsewhere.map((request) => request.url.href)).toEqual([]);
    // The single sign-on steps are the browser's own navigations (start, the provider's redirect back), by design.
    const outsideClient = apiCalls.filter((request) => !request.viaClient && !(request.isNavigation && /^\/api\/auth\/sso\/oidc\/corp\/(start|callback)$/.test(request.url.pathname)));
    expect(outsideClient.map((request) => `${request.method} ${request.url.pathname} (${request.resourceType})`)).toEqual([]);
    expect(requests.filter((request) => ['fetch', 'xhr'].includes(request.resourceType) && !request.url.pathname.startsWith('/api/')).map((request) => request.url.href)).toEqual([]);

    expect(bodies.length).toBeGreaterThan(50);
    for (const body of bodies) {
      for (const secret of [ADMIN.password, idp.clientSecret]) expect(body.text.includes(secret), `${body.url} echoes a secret`).toBe(false);
    }
    // Shown once, in the answer that made them, and nowhere else.
    const carrying = (value: string) => [...new Set(bodies.filter((body) => body.text.includes(value)).map((body) => body.url))];
    expect(carrying(state.totpSecret)).toEqual(['POST /api/auth/two-factor/enroll']);
    for (const code of state.backupCodes) expect(carrying(code)).toEqual(['POST /api/auth/two-factor/confirm']);
    for (const code of state.newBackupCodes) expect(carrying(code)).toEqual(['POST /api/auth/two-factor/backup-codes']);
  });
});
