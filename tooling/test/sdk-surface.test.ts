// The adapter SDK stays narrow and its changes show in review: the checked-in API report matches the sources, and
// the SDK exports at most a few runtime names beyond those adapter code imports (issue 40 item 5: it re-exported the
// whole kernel, 137 names, of which adapters used about 60).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  REGENERATE_COMMAND,
  REPORT_PATH,
  REPO_ROOT,
  adapterCodeFiles,
  renderApiReport,
  sdkExports,
  sdkNamesUsed,
} from '../scripts/sdk-api-report.mjs';
import { sdkSurfaceViolations } from './sdk-surface-rules.js';

/** Runtime exports the SDK may carry that no adapter imports yet (helpers a community adapter may need). */
const SPARE_EXPORTS = 10;

const declared = sdkExports();

describe('@holdfast/sdk API report', () => {
  it(`${REPORT_PATH} lists exactly what the SDK exports`, () => {
    const checkedIn = readFileSync(join(REPO_ROOT, REPORT_PATH), 'utf8');
    const expected = renderApiReport(declared);
    expect(checkedIn === expected, `${REPORT_PATH} is out of date: run \`${REGENERATE_COMMAND}\` and review the change to the adapter API`).toBe(true);
  });
});

describe('@holdfast/sdk surface rule', () => {
  it(`exports at most ${SPARE_EXPORTS} runtime names beyond those adapters, the testkit and the templates import`, () => {
    const { used, unreadable } = sdkNamesUsed(adapterCodeFiles());
    expect(unreadable, 'namespace imports of @holdfast/sdk cannot be counted; import names').toEqual([]);
    expect(used.size).toBeGreaterThan(30);
    expect(sdkSurfaceViolations(declared.runtime, used, SPARE_EXPORTS)).toEqual([]);
  });

  it('names a surface that grew past the spare allowance, and a used name the SDK lost', () => {
    const used = new Map([['z', ['a.ts']], ['secret', ['b.ts']], ['gone', ['c.ts']]]);
    expect(sdkSurfaceViolations(['z', 'secret', 'orderPlugins', 'defineRoute', 'TOKENS'], used, 2)).toEqual([
      '@holdfast/sdk exports 5 runtime names, 3 more than the 2 adapter code imports (allowed: 2 more); not imported by any adapter: defineRoute, orderPlugins, TOKENS',
      '@holdfast/sdk no longer exports gone, which c.ts imports',
    ]);
    expect(sdkSurfaceViolations(['z', 'secret', 'gone', 'TOKENS'], used, 2)).toEqual([]);
  });
});
