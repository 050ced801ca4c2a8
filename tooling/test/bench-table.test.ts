// The benchmark table (tooling/bench/table.mjs, issue 42) reports CPU seconds of shell pipelines from the children's
// times in /proc and decides each row's goals from medians; a wrong count there would print "met" for a row that is
// not. These run real shell pipelines (no benchmark data, about a second).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM script without type declarations
import { shellRun } from '../bench/lib/runners.mjs';
// @ts-expect-error: plain ESM script without type declarations
import { markdownTable, rowFigures } from '../bench/lib/table-report.mjs';

const GIB = 1024 ** 3;

describe('bench table', () => {
  it("counts the CPU of every process of a pipeline, not the shell's wall time", async () => {
    // The busy stage is the first of the pipe, a grandchild of this process: it counts only if the pipeline's
    // children are summed. It does a fixed amount of work (not a wall-clock spin, which a loaded machine would
    // starve) and writes down the CPU it used itself, which the pipeline's total must include.
    const dir = mkdtempSync(join(tmpdir(), 'bench-table-test-'));
    const own = join(dir, 'cpu');
    try {
      const burner = `let x = 0; for (let i = 0; i < 3e8; i++) x = (x + i) % 1e9; const u = process.cpuUsage(); require('fs').writeFileSync('${own}', String((u.user + u.system) / 1e6)); console.log(x)`;
      const burn = await shellRun(`node -e "${burner}" | cat > /dev/null`);
      const burnerCpu = Number(readFileSync(own, 'utf8'));
      expect(burnerCpu).toBeGreaterThan(0.1);
      // /proc counts in ticks of 10 ms.
      expect(burn.cpuSeconds).toBeGreaterThanOrEqual(burnerCpu - 0.02);
      const idle = await shellRun('sleep 0.4 | cat > /dev/null');
      expect(idle.cpuSeconds).toBeLessThan(0.1);
      expect(idle.seconds).toBeGreaterThan(0.35);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects with the failing command when a pipeline fails', async () => {
    await expect(shellRun('false | cat; exit 3')).rejects.toThrow(/pipeline exited 3/);
  });

  it('compares medians against the goal, CPU per GiB against 1.25x, and peaks against 150 MiB', () => {
    const results = new Map([
      ['h', [{ seconds: 10, cpuSeconds: 20, peakRssKiB: 140 * 1024 }, { seconds: 12, cpuSeconds: 26, peakRssKiB: 151 * 1024 }, { seconds: 11, cpuSeconds: 24, peakRssKiB: 130 * 1024 }]],
      ['p', [{ seconds: 9, cpuSeconds: 20 }, { seconds: 10, cpuSeconds: 21 }, { seconds: 30, cpuSeconds: 22 }]],
    ]);
    const row = rowFigures({ name: 'x', holdfast: 'h', against: 'p', againstText: 'a | b', goal: 1.15 }, results, 2 * GIB, new Map());
    expect(row.holdfast.median).toBe(11);
    expect(row.against.median).toBe(10);
    expect(row.ratio).toBeCloseTo(1.1);
    expect(row.met).toBe(true);
    expect(row.cpuPerGiB.holdfast).toBe(12);
    expect(row.cpuRatio).toBeCloseTo(24 / 21);
    expect(row.cpuMet).toBe(true);
    // The highest peak of the three runs decides.
    expect(row.holdfast.peakRssMiB).toBe(151);
    expect(row.rssMet).toBe(false);
    expect(markdownTable([row])).toContain('| x | a \\| b | 11.00 (10.00-12.00) | 10.00 (9.00-30.00) | 1.10x | <= 1.15x | met |');
  });

  it('prints a skipped row with its reason instead of figures', () => {
    const results = new Map([['h', [{ seconds: 1, cpuSeconds: 1 }]]]);
    const skipped = new Map([['p', 'pigz is not installed']]);
    const row = rowFigures({ name: 'PostgreSQL, GZIP', holdfast: 'h', against: 'p', againstText: 'pigz', goal: 1.15 }, results, GIB, skipped);
    expect(row.skipped).toBe('pigz is not installed');
    expect(markdownTable([row])).toContain('| PostgreSQL, GZIP | pigz | skipped: pigz is not installed |');
  });
});
