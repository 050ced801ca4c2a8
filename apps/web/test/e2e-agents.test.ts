// End to end (issue 48, acceptance 5): the agents page in Debian's Chromium against the assembled server. An agent is
// paired through the page (the one-time token and the exact command are shown once), a real `holdfast agent` process
// (apps/cli) is started with what the page showed, the row turns online with the version and host it reported, it is
// chosen as where a source runs in the source form ("Run on": tested there, saved, read back, set back to this
// server; a job of that source gets "Direct from the agent" for its bucket, never for a server folder), renamed and revoked through the page (the confirmation names it), and the process stops for good. A read-only user
// sees the list without any button that changes an agent.
import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerHandle } from '@holdfast/server';
import { spawnNode, type SpawnedProcess } from '@holdfast/tooling/harness/spawned-process';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureWebBuilt, findChromium } from './support/browser.js';
import { captureHere, describeViolations, type AxeFinding } from './support/pages.js';
import { signInCaller, useSessionIn, type SessionCaller } from './support/sessions.js';
import { startWebStack } from './support/web-stack.js';

const SHOTS = fileURLToPath(new URL('../test-results/screenshots', import.meta.url));
const CLI = fileURLToPath(new URL('../../cli/bin/holdfast.mjs', import.meta.url));
const CLI_MAIN = fileURLToPath(new URL('../../cli/dist/main.js', import.meta.url));
const STAMP = `${Date.now()}`;
const ADMIN = {
  email: 'agents-web-admin@example.test',
  password: `pw-${STAMP}-agents page`,
};
const READER = {
  email: 'agents-web-reader@example.test',
  password: `pw-${STAMP}-only looking`,
};

const chromiumFound = await findChromium();
if ('reason' in chromiumFound) console.warn(`@holdfast/web agents e2e skipped: ${chromiumFound.reason}`);
const suite = 'reason' in chromiumFound ? describe.skip : describe;

suite(`agents page in Chromium${'reason' in chromiumFound ? ` (skipped: ${chromiumFound.reason})` : ''}`, () => {
  let server: ServerHandle;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let admin: SessionCaller;
  let agent: SpawnedProcess | undefined;
  const findings: AxeFinding[] = [];

  beforeAll(async () => {
    if (!existsSync(CLI_MAIN)) throw new Error(`${CLI_MAIN} is missing: build first (npm run build -w @holdfast/cli)`);
    ensureWebBuilt();
    await mkdir(SHOTS, { recursive: true });
    dataDir = await mkdtemp(join(tmpdir(), 'holdfast-web-agents-'));
    ({ server, browser, admin } = await startWebStack({
      dataDir,
      chromiumPath: (chromiumFound as { path: string }).path,
      admin: ADMIN,
    }));
    context = await browser.newContext({
      viewport: { width: 1440, height: 900 },
    });
    await useSessionIn(context, server.url, admin);
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
  }, 120_000);

  afterAll(async () => {
    if (agent && agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
    await browser?.close();
    await server?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  afterEach(async (test) => {
    if (test.task.result?.state === 'fail')
      await page
        ?.screenshot({
          path: join(SHOTS, `failed-agents-${test.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`),
        })
        .catch(() => undefined);
  });

  const row = (name: string) => page.locator(`[data-testid="agent-row"][data-agent-name="${name}"]`);
  const stateOf = (name: string) => row(name).getByTestId('agent-state');

  it('pairs an agent: the one-time token, its expiry and the command to run are shown once', async () => {
    await page.goto(`${server.url}/`);
    await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Agents', exact: true }).click();
    await page.waitForURL(/\/agents$/);
    await expect.poll(() => page.title()).toBe('Agents · Holdfast');
    await page.getByTestId('agent-create').click();
    await page.getByText('Enter a name').waitFor();
    await page.locator('[data-field="agent-name"]').fill('warehouse-db');
    await page.getByTestId('agent-create').click();
    const token = (await page.getByTestId('agent-token-value').textContent())!.trim();
    expect(token).toMatch(/^hfa_enroll_/);
    expect(await page.getByTestId('agent-token-expiry').textContent()).not.toBe('—');
    const command = (await page.getByTestId('agent-command').textContent())!;
    expect(command).toContain(`HOLDFAST_AGENT_TOKEN=${token} holdfast agent --server ${server.url} --state-dir /var/lib/holdfast-agent`);
    await expect.poll(() => stateOf('warehouse-db').textContent()).toBe('pending');
    // A name already taken is refused with the server's message.
    await page.locator('[data-field="agent-name"]').fill('warehouse-db');
    await page.getByTestId('agent-create').click();
    await page.getByRole('alert').filter({ hasText: 'The change was refused' }).waitFor();
    await page.screenshot({
      path: join(SHOTS, 'agents-paired.png'),
      fullPage: true,
    });

    // The agent runs the shown command (its server URL and token), with its own private state directory.
    const server_ = /--server (\S+)/.exec(command)![1]!;
    const token_ = /HOLDFAST_AGENT_TOKEN=(\S+)/.exec(command)![1]!;
    const stateDir = join(dataDir, 'agent-state');
    await mkdir(stateDir, { mode: 0o700 });
    agent = spawnNode(CLI, ['agent', '--server', server_, '--state-dir', stateDir, '--max-backoff', '2'], { PATH: process.env.PATH, HOME: dataDir, HOLDFAST_AGENT_TOKEN: token_ });
    // The page re-reads the list every 5 s: the row turns online without a reload.
    await expect
      .poll(() => stateOf('warehouse-db').textContent(), {
        timeout: 30_000,
        interval: 500,
      })
      .toBe('online');
    expect(await row('warehouse-db').getByTestId('agent-host').textContent()).toBe(hostname());
    expect(await row('warehouse-db').getByTestId('agent-version').textContent()).toMatch(/^\d+\.\d+\.\d+/);
    // Its health report (sent in the hello): the state directory's disk, the load and the Node version.
    const health = (await row('warehouse-db').getByTestId('agent-health').textContent()) ?? '';
    expect(health).toMatch(/Disk \d+(\.\d)? [KMGT]i?B free of/);
    expect(health).toContain(`Node ${process.version}`);
    expect(await row('warehouse-db').getByTestId('agent-new-token').count()).toBe(0);
    // Screenshots (desktop and phone, light and dark) and an axe scan, with the token panel and an online row shown.
    await captureHere(page, SHOTS, 'agents', findings);
  }, 90_000);

  it('a source form runs the source on the agent ("Run on"), tests it there, and reads the choice back', async () => {
    const field = (name: string) => page.locator(`[data-field="${name}"]`);
    const choose = async (name: string, option: string) => {
      await field(name).click();
      await page.getByRole('option', { name: option, exact: true }).click();
    };
    const agentId = (await admin.call('GET', '/api/agents')).body.agents.find((entry: { name: string }) => entry.name === 'warehouse-db').id as string;
    await page.goto(`${server.url}/adapters/new/database`);
    await choose('adapterId', 'PostgreSQL');
    await field('name').fill('warehouse orders');
    await field('user').fill('postgres');
    expect(await field('run-on').inputValue()).toBe('This server');
    await choose('run-on', 'Agent warehouse-db (online)');
    await captureHere(page, SHOTS, 'source-run-on', findings);
    // The connection test runs on the agent: the real agent process reaches the local PostgreSQL itself.
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByTestId('test-result').filter({ hasText: 'Connection works' }).waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('link', { name: 'warehouse orders' }).waitFor();
    const sourceId = (await page.getByRole('link', { name: 'warehouse orders' }).getAttribute('href'))!.split('/').pop()!;
    expect((await admin.call('GET', `/api/adapters/${sourceId}`)).body.agentId).toBe(agentId);

    // The job form offers "Direct from the agent" for each destination of a job whose source runs on an agent, except a
    // folder on the server (never direct); the choice is saved as the link's `transfer` and read back.
    const created = async (body: Record<string, unknown>) => {
      const reply = await admin.call('POST', '/api/adapters', body);
      expect(reply.status, JSON.stringify(reply.body)).toBe(201);
      return reply.body.id as string;
    };
    const bucket = await created({ name: 'offsite bucket', type: 'storage', adapterId: 's3', config: { preset: 'custom', endpoint: 'http://127.0.0.1:7480', region: 'us-east-1', forcePathStyle: true, bucket: 'hf-web-transfer', accessKeyId: 'id', secretAccessKey: 'secret' } });
    const backups = await mkdtemp(join(tmpdir(), 'holdfast-web-agents-backups-'));
    const folder = await created({ name: 'server folder', type: 'storage', adapterId: 'local', config: { path: backups } });
    const job = await admin.call('POST', '/api/jobs', { name: 'warehouse nightly', schedule: '0 3 * * *', enabled: false, sourceId, databases: [], destinations: [{ configId: bucket }, { configId: folder, priority: 1 }] });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    await page.goto(`${server.url}/jobs/${job.body.id as string}`);
    await expect.poll(() => field(`transfer-${bucket}`).inputValue()).toBe('Relay through this server');
    expect(await field(`transfer-${folder}`).count()).toBe(0);
    await choose(`transfer-${bucket}`, 'Direct from the agent');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(/\/jobs$/);
    const saved = (await admin.call('GET', `/api/jobs/${job.body.id as string}`)).body.destinations as Array<{ configId: string; transfer: string }>;
    expect(Object.fromEntries(saved.map((link) => [link.configId, link.transfer]))).toEqual({ [bucket]: 'direct', [folder]: 'relay' });
    await rm(backups, { recursive: true, force: true });

    await page.goto(`${server.url}/adapters/${sourceId}`);
    await expect.poll(() => field('run-on').inputValue()).toBe('Agent warehouse-db (online)');
    await choose('run-on', 'This server');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(/\/sources$/);
    expect((await admin.call('GET', `/api/adapters/${sourceId}`)).body.agentId).toBeNull();
  }, 90_000);

  it('renames and revokes it through the page; the revoked agent stops for good', async () => {
    await page.goto(`${server.url}/agents`);
    await row('warehouse-db').getByTestId('agent-rename').click();
    await page.locator('[data-field="agent-new-name"]').fill('warehouse-db-eu');
    await page.getByTestId('agent-rename-save').click();
    await row('warehouse-db-eu').waitFor();
    expect(await stateOf('warehouse-db-eu').textContent()).toBe('online');

    let confirmation = '';
    page.once('dialog', (dialog) => {
      confirmation = dialog.message();
      void dialog.accept();
    });
    await row('warehouse-db-eu').getByTestId('agent-revoke').click();
    await expect.poll(() => stateOf('warehouse-db-eu').textContent()).toBe('revoked');
    expect(confirmation).toContain('"warehouse-db-eu"');
    expect(await row('warehouse-db-eu').getByRole('button').count()).toBe(0);
    // Revoked (4004) is permanent: the process exits with 11 instead of reconnecting.
    const exited = await Promise.race([agent!.exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('agent still running 15 s after revoke')), 15_000))]);
    expect(exited.code).toBe(11);
    const listed = await admin.call('GET', '/api/agents');
    expect(listed.body.agents.find((entry: { name: string }) => entry.name === 'warehouse-db-eu')).toMatchObject({ status: 'revoked' });
  }, 60_000);

  it('a pending agent gets a new token; a reader sees the list without changing buttons', async () => {
    await page.locator('[data-field="agent-name"]').fill('branch-office');
    await page.getByTestId('agent-create').click();
    const first = (await page.getByTestId('agent-token-value').textContent())!.trim();
    await row('branch-office').getByTestId('agent-new-token').click();
    await expect.poll(async () => (await page.getByTestId('agent-token-value').textContent())!.trim()).not.toBe(first);

    const group = await admin.call('POST', '/api/groups', {
      name: `Agent watchers ${STAMP}`,
      permissions: ['agents:read'],
    });
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    expect(
      (
        await admin.call('POST', '/api/users', {
          name: 'Rea Reader',
          ...READER,
          groupId: group.body.id,
        })
      ).status
    ).toBe(201);
    const reader = await signInCaller(server.url, READER.email, READER.password);
    const readerContext = await browser.newContext({
      viewport: { width: 1440, height: 900 },
    });
    try {
      await useSessionIn(readerContext, server.url, reader);
      const readerPage = await readerContext.newPage();
      await readerPage.goto(`${server.url}/agents`);
      await readerPage.locator('[data-testid="agent-row"][data-agent-name="branch-office"]').waitFor();
      expect(await readerPage.getByTestId('agent-row').count()).toBe(2);
      expect(await readerPage.getByTestId('agent-create').count()).toBe(0);
      expect(await readerPage.getByRole('main').getByRole('button').count()).toBe(0);
    } finally {
      await readerContext.close();
    }
    expect(describeViolations(findings)).toEqual([]);
  }, 60_000);
});
