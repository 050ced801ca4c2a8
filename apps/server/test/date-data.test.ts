// A server whose time zones are all UTC (the default) never builds an Intl.DateTimeFormat: the process's first one
// loads ICU's date data, about 8 MiB of resident memory kept for good (docs/benchmarks.md, "Session 13"). Checked in
// fresh processes, since a test runner's own process may have loaded it already.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const serverDir = fileURLToPath(new URL('..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'holdfast-date-data-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// Counts every Intl.DateTimeFormat built (with or without `new`) and prints the count as the last line.
const COUNT_FORMATTERS = `
let formatters = 0;
const Original = Intl.DateTimeFormat;
Intl.DateTimeFormat = new Proxy(Original, {
  construct: (target, args, newTarget) => (formatters++, Reflect.construct(target, args, newTarget)),
  apply: (target, self, args) => (formatters++, Reflect.apply(target, self, args)),
});
process.on('exit', () => console.log(JSON.stringify({ formatters })));
`;

/** Runs `body` (an ES module body, after the counter is installed) in a fresh Node process; answers the count. */
async function formattersBuiltBy(body: string): Promise<number> {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', `${COUNT_FORMATTERS}\nimport 'reflect-metadata';\n${body}`], {
    cwd: serverDir,
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!).formatters;
}

/** A backup's date work in one zone: the file name and a GFS retention pass (schedules run inside the server). */
const dateWorkIn = (zone: string) => `
  const { TemplateNaming, namingConfigSchema } = await import('@holdfast/naming-template');
  const { GfsRetention, retentionPolicySchema } = await import('@holdfast/retention-gfs');
  const name = new TemplateNaming(namingConfigSchema.parse({})).render('{job_name}_yyyy-MM-dd_HH-mm-ss', { jobName: 'nightly', date: new Date(), timezone: ${JSON.stringify(zone)} });
  if (!/^nightly_\\d{4}-\\d{2}-\\d{2}_\\d{2}-\\d{2}-\\d{2}$/.test(name)) throw new Error('unexpected name ' + name);
  const gfs = new GfsRetention(retentionPolicySchema.parse({ mode: 'gfs', daily: 2, weekly: 1 }));
  const day = 86_400_000;
  const decisions = gfs.select([0, 1, 2, 9].map((n) => ({ key: 'b' + n, createdAt: new Date(Date.UTC(2026, 10, 20) - n * day), locked: false })), new Date(), ${JSON.stringify(zone)});
  if (decisions.length !== 4) throw new Error('retention answered ' + decisions.length + ' decisions');
`;

describe('ICU date data stays unloaded while every zone is UTC', () => {
  it('starting the whole server (catalog, scheduler, system tasks) builds no date formatter', async () => {
    const dataDir = join(scratch, 'server');
    const formatters = await formattersBuiltBy(`
      const { startServer } = await import('./dist/start-server.js');
      const { pino } = await import('pino');
      const server = await startServer({ env: { PORT: '0', HOLDFAST_DATA_DIR: ${JSON.stringify(dataDir)} }, logger: pino({ level: 'silent' }), host: '127.0.0.1' });
      const health = await fetch(server.url + '/api/health');
      if (health.status !== 200) throw new Error('health answered ' + health.status);
      ${dateWorkIn('UTC')}
      await server.close();
    `);
    expect(formatters).toBe(0);
  }, 90_000);

  it('a named zone still works, and is what loads the data (the counter sees it)', async () => {
    const formatters = await formattersBuiltBy(`
      ${dateWorkIn('Europe/Berlin')}
    `);
    expect(formatters).toBeGreaterThan(0);
  }, 60_000);
});
