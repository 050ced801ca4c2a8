// The release plan of the pending changesets keeps the 0.x rule of docs/architecture.md: compatible kernel and sdk
// changes are patches, so adapters (peer-dependent on `@holdfast/sdk` ^0.x) are never pushed to a major release by
// accident. A breaking contract change must raise ADAPTER_API_VERSION and update this test on purpose.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('release plan of the pending changesets', () => {
  it('bumps no package to a new major version and the kernel and sdk by patch at most', () => {
    const dir = mkdtempSync(join(tmpdir(), 'holdfast-release-plan-'));
    try {
      const output = join(dir, 'plan.json');
      execFileSync(process.execPath, [join(root, 'node_modules/@changesets/cli/bin.js'), 'status', `--output=${output}`], { cwd: root, stdio: 'pipe' });
      const plan = JSON.parse(readFileSync(output, 'utf8')) as { releases: Array<{ name: string; type: string }> };
      expect(plan.releases.length).toBeGreaterThan(0);
      expect(plan.releases.filter((release) => release.type === 'major').map((release) => release.name)).toEqual([]);
      for (const name of ['@holdfast/kernel', '@holdfast/sdk']) {
        const release = plan.releases.find((r) => r.name === name);
        if (release) expect(`${name}: ${release.type}`).toBe(`${name}: patch`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
