// End to end (issue 44, the web part): the point-in-time panel and restore dialog of a MySQL/MariaDB job, in Debian's
// Chromium (playwright-core) against the assembled server on the embedded database. A real MySQL source in
// point-in-time mode on the PITR MariaDB test server (127.0.0.1:3307, binary logging on, ROW) with a local
// destination: the supervisor streams the binary log, one run of the job takes the base backup, rows are written
// after it (so only the binary log has them), and the dialog restores `latest` into a new database through "Server":
// a second source configuration of the same adapter (here reaching the same server with the same account, so the
// test needs no second MariaDB; the engine's mysql-point-restore-other-server.test.ts restores onto a separate one);
// that database must hold exactly the rows of the original. A source over SSH, offered under "Server", is refused by
// the API (422) and the refusal shown under that field. The source uses the server's administrator
// account: the `holdfast_binlog` account may stream and dump but not create a database nor replay a binary log
// (no CREATE, INSERT, BINLOG REPLAY), which the restore needs. Every database the file creates starts with DB and is
// dropped afterwards.
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { ServerHandle } from '@holdfast/server';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureWebBuilt, findChromium } from './support/browser.js';
import { captureHere, describeViolations, type AxeFinding } from './support/pages.js';
import { useSessionIn, waitForFinal, type SessionCaller } from './support/sessions.js';
import { startWebStack } from './support/web-stack.js';

const run = promisify(execFile);
const SHOTS = fileURLToPath(new URL('../test-results/screenshots', import.meta.url));
const STAMP = `${Date.now()}`;
const ADMIN = { email: 'mysql-pitr-admin@example.test', password: `pw-${STAMP}-binary logs` };
const MARIADB_STATE = '/tmp/holdfast-test-services/mariadb-pitr/mariadb-pitr.json';
/** The test's database; every database it creates (the restores, the one in the way) starts with this name. */
const DB = `hf_web_pitr_${randomBytes(4).toString('hex')}`;

const chromiumFound = await findChromium();
if ('reason' in chromiumFound) console.warn(`@holdfast/web MySQL point-in-time e2e skipped: ${chromiumFound.reason}`);
const suite = 'reason' in chromiumFound ? describe.skip : describe;

interface MariadbPitr {
  host: string;
  port: number;
  users: Record<'admin' | 'binlog', { user: string; password: string }>;
}

async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

suite(`MySQL point-in-time restore dialog in Chromium${'reason' in chromiumFound ? ` (skipped: ${chromiumFound.reason})` : ''}`, () => {
  let server: ServerHandle;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: SessionCaller;
  let mariadb: MariadbPitr;
  let dataDir: string;
  let localDir: string;
  const findings: AxeFinding[] = [];

  /** As the server's administrator with the command-line client: tab-separated rows, no header. */
  async function sql(statement: string): Promise<string> {
    const { user, password } = mariadb.users.admin;
    const { stdout } = await run('mariadb', ['-h', mariadb.host, '-P', String(mariadb.port), '-u', user, `-p${password}`, '-N', '-B', '-e', statement]);
    return stdout.trim();
  }
  const rowsOf = (database: string) => sql(`SELECT id, label FROM \`${database}\`.items ORDER BY id`);

  beforeAll(async () => {
    ensureWebBuilt();
    mariadb = JSON.parse(await readFile(MARIADB_STATE, 'utf8')) as MariadbPitr;
    await sql(`CREATE DATABASE \`${DB}\``);
    await sql(`CREATE TABLE \`${DB}\`.items (id INT PRIMARY KEY, label VARCHAR(40) NOT NULL) ENGINE=InnoDB`);
    // Writes that only make the binary log grow (a piece is archived when the file grew), never compared.
    await sql(`CREATE TABLE \`${DB}\`.nudges (id INT AUTO_INCREMENT PRIMARY KEY) ENGINE=InnoDB`);
    // A database in the way of one restore: the server must refuse it (409) and the dialog show it under the field.
    await sql(`CREATE DATABASE \`${DB}_taken\``);
    dataDir = await mkdtemp(join(tmpdir(), 'holdfast-web-mypitr-'));
    localDir = await mkdtemp(join(tmpdir(), 'holdfast-web-mypitr-local-'));
    ({ server, browser, admin } = await startWebStack({ dataDir, chromiumPath: (chromiumFound as { path: string }).path, admin: ADMIN }));
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, timezoneId: 'Europe/Berlin', locale: 'en-GB' });
    await useSessionIn(context, server.url, admin);
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (mariadb) {
      // Exact prefix: `_` is a LIKE wildcard, so the names are filtered here.
      const names = (await sql('SHOW DATABASES').catch(() => '')).split('\n').filter((name) => name.startsWith(DB));
      for (const name of names) await sql(`DROP DATABASE IF EXISTS \`${name}\``);
    }
    for (const dir of [dataDir, localDir]) if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  afterEach(async (test) => {
    if (test.task.result?.state === 'fail') await page?.screenshot({ path: join(SHOTS, `failed-mysql-pitr-${test.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
  });

  const field = (name: string) => page.locator(`[data-field="${name}"]`);

  it('restores latest into a new database through the dialog: the new database holds every row, those after the base too', async () => {
    expect((await admin.call('PUT', '/api/settings', { authPoints: 10_000, apiPoints: 100_000, mutationPoints: 100_000 })).status).toBe(200);
    const { user, password } = mariadb.users.admin;
    const source = await admin.call('POST', '/api/adapters', {
      type: 'database',
      adapterId: 'mysql',
      name: 'mariadb pitr',
      config: { mode: 'point-in-time', host: mariadb.host, port: mariadb.port, user, password, tls: 'disable', binlogFlushIntervalSeconds: 1 },
    });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    const destination = await admin.call('POST', '/api/adapters', { type: 'storage', adapterId: 'local', name: 'binlog disk', config: { path: localDir } });
    expect(destination.status, JSON.stringify(destination.body)).toBe(201);
    // Other sources of the same adapter for "Server": one the restore can go to, one over SSH the API refuses.
    const second = await admin.call('POST', '/api/adapters', { type: 'database', adapterId: 'mysql', name: 'mariadb second', config: { host: mariadb.host, port: mariadb.port, user, password, tls: 'disable' } });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    const overSsh = await admin.call('POST', '/api/adapters', {
      type: 'database',
      adapterId: 'mysql',
      name: 'mariadb over ssh',
      config: { host: mariadb.host, port: mariadb.port, user, password, tls: 'disable', ssh: { host: '127.0.0.1', port: 22, username: 'nobody', hostKeySha256: `SHA256:${'A'.repeat(43)}` } },
    });
    expect(overSsh.status, JSON.stringify(overSsh.body)).toBe(201);
    const job = await admin.call('POST', '/api/jobs', { name: 'shop pitr', sourceId: source.body.id, databases: [DB], schedule: '0 3 * * *', destinations: [{ configId: destination.body.id }] });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    const jobId = job.body.id as string;
    const pointInTime = async () => (await admin.call('GET', `/api/jobs/${jobId}/point-in-time`)).body.data;
    expect(await pointInTime()).toMatchObject({ enabled: true, logKind: 'mysql-binlog', window: null });

    // The supervisor re-reads the jobs every 15 s and starts the stream; the base must come after its first file.
    await until('the binary log stream to start', async () => (await pointInTime()).streaming?.state === 'streaming', 60_000);
    await sql(`INSERT INTO \`${DB}\`.items VALUES (1, 'in the base'), (2, 'in the base too')`);
    await until('a first archived binary log piece', async () => ((await pointInTime()).segments ?? 0) > 0, 30_000);
    const base = await admin.call('POST', `/api/jobs/${jobId}/run`, {});
    expect(base.status, JSON.stringify(base.body)).toBe(200);
    expect(await waitForFinal(admin, base.body.executionId, 90_000)).toBe('Success');
    // Rows only the binary log holds: written after the base, one of the base's rows changed.
    await sql(`INSERT INTO \`${DB}\`.items VALUES (3, 'after the base'); UPDATE \`${DB}\`.items SET label = 'changed after the base' WHERE id = 1`);
    const written = Date.now();
    // The window reaches past the writes once a piece archived after them is flushed; a piece is only taken when the
    // file grew, so on a server nobody else writes to a later write is needed (it failed in CI after 30 s without).
    await until('a window that covers the writes after the base', async () => {
      const window = (await pointInTime()).window;
      if (window && Date.parse(window.end) >= written + 1_000) return true;
      await sql(`INSERT INTO \`${DB}\`.nudges VALUES ()`);
      return false;
    }, 90_000);
    const expected = await rowsOf(DB);
    expect(expected.split('\n')).toHaveLength(3);

    // The panel names the binary log, not WAL.
    await page.goto(`${server.url}/jobs/${jobId}`);
    await page.getByTestId('pitr-window').waitFor();
    expect(await page.getByTestId('pitr-archive').textContent()).toMatch(/^\d+ binary log pieces?, /);
    expect(await page.getByTestId('pitr-panel').textContent()).toContain('Binary log stream');
    expect(await page.getByTestId('pitr-panel').textContent()).not.toContain('WAL');
    await captureHere(page, SHOTS, 'mysql-pitr-panel', findings, '[data-testid="pitr-panel"]');

    await page.getByTestId('pitr-restore-open').click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    // MySQL's fields: no folder, no port, no named restore point; a binary log position instead of an LSN.
    expect(await field('pitr-target-path').count()).toBe(0);
    expect(await field('pitr-serve-port').count()).toBe(0);
    expect(await field('pitr-kind-name').count()).toBe(0);
    expect(await dialog.textContent()).not.toContain('WAL');
    await dialog.getByLabel('A binary log position (file:offset)').check();
    await field('pitr-position').fill('0/3000028');
    await dialog.getByText('Enter a binary log position as file:offset, such as mysql-bin.000012:4567').waitFor();
    expect(await page.getByTestId('pitr-restore-start').isDisabled()).toBe(true);
    // A GTID: checked as the API checks it (MySQL's uuid:n refused with a sentence), nothing sent.
    await dialog.getByLabel('A GTID (that transaction included)').check();
    await field('pitr-gtid').fill('3E11FA47-71CA-11E1-9E33-C80AA9429562:23');
    await dialog.getByText("MySQL's GTIDs (server uuid:number) are not supported", { exact: false }).waitFor();
    await field('pitr-gtid').fill('0-1');
    await dialog.getByText('Enter one MariaDB GTID as domain-server-sequence', { exact: false }).waitFor();
    expect(await page.getByTestId('pitr-restore-start').isDisabled()).toBe(true);

    await dialog.getByLabel('The latest archived binary log').check();
    // The job's one database is offered, and a new name suggested from it.
    expect(await field('pitr-database').inputValue()).toBe(DB);
    const suggested = await field('pitr-target-database').inputValue();
    expect(suggested).toMatch(new RegExp(`^${DB}_restored_\\d{8}_\\d{6}$`));
    // A name the API would refuse is refused in the dialog, nothing sent.
    await field('pitr-target-database').fill(`${DB}.copy`);
    await dialog.getByText('Use letters, digits, "_", "$" and "-" only').waitFor();
    expect(await page.getByTestId('pitr-restore-start').isDisabled()).toBe(true);

    // A database that exists: the server's 409 is shown under the new name's field, in its words.
    const restorePath = `/api/jobs/${jobId}/point-in-time/restore`;
    await field('pitr-target-database').fill(`${DB}_taken`);
    // The job's own server is the default: no targetSourceId is sent.
    expect(await field('pitr-target-source').inputValue()).toBe("mariadb pitr (the job's own server)");
    const refused = page.waitForResponse((response) => response.request().method() === 'POST' && response.url().endsWith(restorePath));
    await page.getByTestId('pitr-restore-start').click();
    const refusal = await refused;
    expect(refusal.status()).toBe(409);
    expect(refusal.request().postDataJSON().targetSourceId).toBeUndefined();
    const refusalText = ((await refusal.json()) as { error: string }).error;
    expect(refusalText).toContain('already exists');
    const fieldError = page.locator(`#${await field('pitr-target-database').getAttribute('id')}-error`);
    await fieldError.waitFor();
    expect(await fieldError.textContent()).toBe(refusalText);

    // A database the base does not hold: the server's 422 (which lists the ones it holds) under the database field.
    await field('pitr-database').fill(`${DB}_nothere`);
    await field('pitr-target-database').fill(`${DB}_never`);
    const notInBase = page.waitForResponse((response) => response.request().method() === 'POST' && response.url().endsWith(restorePath));
    await page.getByTestId('pitr-restore-start').click();
    const notInBaseAnswer = await notInBase;
    expect(notInBaseAnswer.status()).toBe(422);
    const notInBaseText = ((await notInBaseAnswer.json()) as { error: string }).error;
    expect(notInBaseText).toContain(`it holds "${DB}"`);
    const databaseError = page.locator(`#${await field('pitr-database').getAttribute('id')}-error`);
    await databaseError.waitFor();
    expect(await databaseError.textContent()).toBe(notInBaseText);
    await field('pitr-database').fill(DB);
    await field('pitr-database').blur();

    // "Server" offers the other sources of the adapter; one over SSH: the API's 422 under the Server field.
    await field('pitr-target-source').click();
    await page.getByRole('option', { name: 'mariadb over ssh' }).click();
    await field('pitr-target-database').fill(suggested);
    const sshRefused = page.waitForResponse((response) => response.request().method() === 'POST' && response.url().endsWith(restorePath));
    await page.getByTestId('pitr-restore-start').click();
    const sshAnswer = await sshRefused;
    expect(sshAnswer.status()).toBe(422);
    const sshText = ((await sshAnswer.json()) as { error: string }).error;
    expect(sshText).toContain('targetSourceId: source "mariadb over ssh" cannot take a point-in-time restore');
    const serverError = page.locator(`#${await field('pitr-target-source').getAttribute('id')}-error`);
    await serverError.waitFor();
    expect(await serverError.textContent()).toBe(sshText);

    // The suggested name on the second source: queued, the dialog links to the run.
    await field('pitr-target-source').click();
    await page.getByRole('option', { name: 'mariadb second' }).click();
    await field('pitr-target-database').fill(suggested);
    expect(await page.getByTestId('pitr-restore-summary').textContent()).toBe(`Restore the database ${DB} as of the newest archived binary log into the new database ${suggested} on mariadb second.`);
    await captureHere(page, SHOTS, 'mysql-pitr-restore-dialog', findings, '[role="dialog"]');
    const posted = page.waitForRequest((request) => request.method() === 'POST' && request.url().endsWith(restorePath));
    const answered = page.waitForResponse((response) => response.request().method() === 'POST' && response.url().endsWith(restorePath));
    await page.getByTestId('pitr-restore-start').click();
    expect((await posted).postDataJSON()).toEqual({ target: { type: 'latest' }, database: DB, targetDatabase: suggested, targetSourceId: second.body.id });
    const answer = await answered;
    const body = (await answer.json()) as { data?: { executionId?: string }; error?: string };
    expect(answer.status(), body.error).toBe(202);
    const executionId = body.data!.executionId!;
    await page.getByTestId('pitr-restore-run-link').click();
    await page.waitForURL(new RegExp(`/runs/${executionId}$`));
    await page.getByTestId('run-status').waitFor();
    const status = await waitForFinal(admin, executionId, 90_000);
    const execution = (await admin.call('GET', `/api/executions/${executionId}?includeLogs=true`)).body.data;
    const logText = (execution.logs ?? []).map((line: { message: string }) => line.message).join('\n');
    expect(status, `${execution.error ?? ''}\n${logText}`).toBe('Success');
    expect(logText).toContain(`on the server of source "mariadb second (${mariadb.host}:${mariadb.port})" (targetSourceId ${second.body.id})`);
    // The new database equals the original, the rows written after the base included.
    expect(await rowsOf(suggested)).toBe(expected);
    expect(expected).toContain('3\tafter the base');
    expect(expected).toContain('1\tchanged after the base');
  }, 240_000);

  it('has no serious accessibility problems in the panel and the dialog', () => {
    expect(describeViolations(findings)).toEqual([]);
  });
});
