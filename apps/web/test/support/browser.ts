import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * The built app the server under test serves (`HOLDFAST_WEB_DIR`); `HOLDFAST_E2E_WEB_ROOT` points a run at another
 * build (an older commit's, to show a new test fails on it).
 */
export const WEB_ROOT = process.env.HOLDFAST_E2E_WEB_ROOT ?? fileURLToPath(new URL('../../dist', import.meta.url));

/** `npm test` builds every package first; a lone run of an e2e file builds the app itself. */
export function ensureWebBuilt(): void {
  if (existsSync(join(WEB_ROOT, 'index.html'))) return;
  const build = spawnSync('npx', ['vite', 'build'], { cwd: fileURLToPath(new URL('../..', import.meta.url)), stdio: 'inherit' });
  if (build.status !== 0) throw new Error('vite build of apps/web failed');
}

/** The launch flags of TESTING.md: headless, no sandbox (root in a container), nothing phoning home. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Finds Debian's Chromium, installing it through the shared test-services recipe when missing. Returns the reason
 * when it cannot be had (the suite then skips and prints it).
 */
export async function findChromium(): Promise<{ path: string } | { reason: string }> {
  if (existsSync(CHROMIUM_PATH)) return { path: CHROMIUM_PATH };
  try {
    const recipe = new URL('../../../../tooling/test-services/chromium.mjs', import.meta.url).href;
    const { ensureChromium } = (await import(recipe)) as { ensureChromium(): string };
    ensureChromium();
    return { path: CHROMIUM_PATH };
  } catch (error) {
    return { reason: `Chromium is not installed at ${CHROMIUM_PATH} and could not be installed: ${(error as Error).message}` };
  }
}

const require = createRequire(import.meta.url);
let axeSource: string | undefined;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown; failureSummary?: string }>;
}

/**
 * Runs axe-core in the page (evaluated through DevTools, so the page's CSP stays on) and returns the serious and
 * critical violations; `within` (a CSS selector) limits the scan to that part of the page.
 */
export async function seriousViolations(page: Page, within?: string): Promise<AxeViolation[]> {
  axeSource ??= await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(`${axeSource}\n;undefined`);
  const context = within ? JSON.stringify({ include: [within] }) : 'document';
  const result = (await page.evaluate(`axe.run(${context}, { resultTypes: ['violations'] })`)) as { violations: AxeViolation[] };
  return result.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}
