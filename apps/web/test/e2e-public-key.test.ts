// End to end (issue 45): a public-key (age) encryption profile in the web app, in Debian's Chromium against the
// assembled server with a real PostgreSQL source. A backup is made through the API with a key pair from Debian's
// age-keygen. On the storage page, a restore with a wrong private key is refused (the server's 400 shown, nothing
// restored); with the right one it restores every row. A download asks for the key (the server refuses without
// it) and then gives exactly what `age -d -i key.txt` gives.
import 'reflect-metadata';
import { execFile, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { ServerHandle } from '@holdfast/server';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureWebBuilt, findChromium } from './support/browser.js';
import { useSessionIn, waitForFinal, type SessionCaller } from './support/sessions.js';
import { startWebStack } from './support/web-stack.js';

const run = promisify(execFile);
const SHOTS = fileURLToPath(new URL('../test-results/screenshots', import.meta.url));
const STAMP = `${Date.now()}`;
const ADMIN = { email: 'age-admin@example.test', password: `pw-${STAMP}-public keys only` };
const DATABASE = `web_age_${STAMP}`;
const today = new Date();
const RESTORED = `${DATABASE}_restored_${today.getFullYear()}${String(today.getMonth() + 1).padStart(2, '0')}${String(today.getDate()).padStart(2, '0')}`;

const chromiumFound = await findChromium();
if ('reason' in chromiumFound) console.warn(`@holdfast/web public-key e2e skipped: ${chromiumFound.reason}`);
const suite = 'reason' in chromiumFound ? describe.skip : describe;

async function psql(database: string, sql: string): Promise<string> {
  const { stdout } = await run('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', database, '-Atc', sql]);
  return stdout.trim();
}

suite(`public-key encryption profiles in Chromium${'reason' in chromiumFound ? ` (skipped: ${chromiumFound.reason})` : ''}`, () => {
  let server: ServerHandle;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let localDir: string;
  let admin: SessionCaller;
  let identity: string;
  let backupFile: string;

  beforeAll(async () => {
    ensureWebBuilt();
    await mkdir(SHOTS, { recursive: true });
    await psql('postgres', `CREATE DATABASE ${DATABASE}`);
    await psql(DATABASE, "CREATE TABLE items (id int primary key, note text); INSERT INTO items SELECT g, 'note ' || g FROM generate_series(1, 3000) g");
    dataDir = await mkdtemp(join(tmpdir(), 'holdfast-web-age-'));
    localDir = await mkdtemp(join(tmpdir(), 'holdfast-web-age-local-'));
    ({ server, browser, admin } = await startWebStack({ dataDir, chromiumPath: (chromiumFound as { path: string }).path, admin: ADMIN }));
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    await useSessionIn(context, server.url, admin);
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    for (const dir of [dataDir, localDir]) if (dir) await rm(dir, { recursive: true, force: true });
    for (const name of [DATABASE, RESTORED]) await psql('postgres', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
  });

  afterEach(async (test) => {
    if (test.task.result?.state === 'fail') await page?.screenshot({ path: join(SHOTS, `failed-public-key-${test.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
  });

  const field = (name: string) => page.locator(`[data-field="${name}"]`);
  const choose = async (name: string, option: string) => {
    await field(name).click();
    await page.getByRole('option', { name: option, exact: true }).click();
  };
  const openStorage = async () => {
    await page.goto(`${server.url}/storage`);
    await page.waitForLoadState('networkidle');
    await choose('storage-select', 'local disk');
    await page.getByTestId('storage-row').first().waitFor();
  };

  it('makes a backup with a public-key profile (a key pair from age-keygen)', async () => {
    const keygen = spawnSync('age-keygen', ['-o', join(dataDir, 'key.txt')], { encoding: 'utf8' });
    if (keygen.error || keygen.status !== 0) throw new Error('age-keygen is missing: run `npm run test:services` (as root) or `apt-get install -y age`');
    const recipient = /age1[0-9a-z]+/.exec(keygen.stderr)![0];
    identity = /AGE-SECRET-KEY-1[0-9A-Z]+/.exec(await readFile(join(dataDir, 'key.txt'), 'utf8'))![0];
    expect((await admin.call('PUT', '/api/settings', { authPoints: 10_000, apiPoints: 100_000, mutationPoints: 100_000 })).status).toBe(200);
    const source = await admin.call('POST', '/api/adapters', { type: 'database', adapterId: 'postgres', name: 'orders db', config: { host: '127.0.0.1', port: 5432, user: 'postgres' } });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    const destination = await admin.call('POST', '/api/adapters', { type: 'storage', adapterId: 'local', name: 'local disk', config: { path: localDir } });
    expect(destination.status).toBe(201);
    const profile = await admin.call('POST', '/api/vault', { name: 'owner key', publicKey: recipient });
    expect(profile.status, JSON.stringify(profile.body)).toBe(201);
    const job = await admin.call('POST', '/api/jobs', { name: 'orders nightly', sourceId: source.body.id, databases: [DATABASE], schedule: '0 3 * * *', encryptionProfileId: profile.body.id, destinations: [{ configId: destination.body.id }] });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    const trigger = await admin.call('POST', `/api/jobs/${job.body.id}/run`, {});
    expect(trigger.status).toBe(200);
    expect(await waitForFinal(admin, trigger.body.executionId, 120_000)).toBe('Success');
    backupFile = (await readdir(localDir)).find((name) => name.endsWith('.enc'))!;
    expect(backupFile).toBeDefined();
    // The rate limits apply within 5 s.
    await new Promise((resolve) => setTimeout(resolve, 5_500));
  }, 180_000);

  it('a restore with a wrong private key is refused; with the right one every row is back', async () => {
    await openStorage();
    await page.getByTestId('restore').first().click();
    await choose('restore-target', 'orders db');
    expect(await field('restore-database').inputValue()).toBe(RESTORED);
    const wrong = spawnSync('age-keygen', [], { encoding: 'utf8' });
    await field('private-key').fill(/AGE-SECRET-KEY-1[0-9A-Z]+/.exec(wrong.stdout)![0]);
    await page.getByTestId('restore-start').click();
    const refusal = page.getByRole('alert').filter({ hasText: 'Restore refused' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/wrong key/);
    expect(await psql('postgres', `SELECT count(*) FROM pg_database WHERE datname = '${RESTORED}'`)).toBe('0');
    await field('private-key').fill(identity);
    await page.getByTestId('restore-start').click();
    await page.waitForURL(/\/runs\//);
    await page.getByTestId('run-status').filter({ hasText: 'Success' }).waitFor({ timeout: 180_000 });
    expect(await psql(RESTORED, 'SELECT count(*) FROM items')).toBe('3000');
  }, 240_000);

  it('a download asks for the private key and gives what age -d gives', async () => {
    await openStorage();
    await page.getByTestId('download').first().click();
    await field('private-key').fill(identity);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-with-key').click()]);
    const saved = join(dataDir, 'downloaded');
    await download.saveAs(saved);
    const byAge = spawnSync('age', ['-d', '-i', join(dataDir, 'key.txt'), join(localDir, backupFile)]);
    expect(byAge.status).toBe(0);
    expect((await readFile(saved)).equals(byAge.stdout)).toBe(true);
  }, 120_000);
});
