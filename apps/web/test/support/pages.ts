import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { seriousViolations, type AxeViolation } from './browser.js';

/** What a page asked of the network: enough to prove API calls go through the typed client and stay on origin. */
export interface SeenRequest {
  url: URL;
  method: string;
  resourceType: string;
  isNavigation: boolean;
  viaClient: boolean;
}

/** A JSON answer of the API, kept to scan for secrets afterwards. */
export interface SeenBody {
  url: string;
  text: string;
}

/** Listens to a page's requests and JSON API answers (bodies are read asynchronously: await `pending` first). */
export function recordTraffic(page: Page, requests: SeenRequest[], bodies: SeenBody[], pending: Array<Promise<unknown>>): void {
  page.on('request', (request) => {
    requests.push({
      url: new URL(request.url()),
      method: request.method(),
      resourceType: request.resourceType(),
      isNavigation: request.isNavigationRequest(),
      viaClient: request.headers()['x-holdfast-web'] === '1',
    });
  });
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (!url.pathname.startsWith('/api/') || !(response.headers()['content-type'] ?? '').includes('json')) return;
    pending.push(response.text().then((text) => bodies.push({ url: `${response.request().method()} ${url.pathname}`, text }), () => undefined));
  });
}

export type AxeFinding = { page: string; scheme: string; violations: AxeViolation[] };

const SIZES = [
  ['desktop', { width: 1440, height: 900 }],
  ['phone', { width: 390, height: 844 }],
] as const;

/**
 * Screenshots of the page as it is now (no navigation, so a step in the middle of a flow can be shown) at desktop
 * and phone width in light and dark, with an axe scan per scheme at desktop width. `within` narrows the scan to
 * one part (an open modal dialog: what lies under its overlay cannot be used and is dimmed on purpose).
 */
export async function captureHere(page: Page, shots: string, name: string, findings: AxeFinding[], within?: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [label, size] of SIZES) {
      await page.setViewportSize(size);
      await page.screenshot({ path: join(shots, `${name}-${label}-${scheme}.png`), fullPage: true });
      if (label === 'desktop') findings.push({ page: name, scheme, violations: await seriousViolations(page, within) });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1440, height: 900 });
}

/** One line per page and scheme with a serious or critical axe violation (empty when there is none), for an assertion. */
export function describeViolations(findings: AxeFinding[]): string[] {
  return findings
    .filter((entry) => entry.violations.length > 0)
    .map((entry) => `${entry.page} (${entry.scheme}): ${entry.violations.map((v) => `${v.id} [${v.impact}] ${v.help} at ${JSON.stringify(v.nodes.slice(0, 3).map((n) => n.target))}`).join('; ')}`);
}
