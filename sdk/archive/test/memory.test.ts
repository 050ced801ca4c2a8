import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const MiB = 1024 * 1024;

describe('memory while writing large members', () => {
  it('keeps peak RSS flat writing a 1 GiB stored member and a 512 MiB zstd dump into a slow consumer', { timeout: 600_000 }, async () => {
    // Bundled under the package's node_modules so the bundle's bare imports (zod, @cloudpss/zstd) still resolve.
    const cacheDir = join(packageDir, 'node_modules', '.cache');
    await mkdir(cacheDir, { recursive: true });
    const buildDir = await mkdtemp(join(cacheDir, 'memory-test-'));
    cleanups.push(() => rm(buildDir, { recursive: true, force: true }));
    const bundle = join(buildDir, 'archive.mjs');
    await build({
      entryPoints: [join(packageDir, 'src', 'index.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile: bundle,
      external: ['zod', '@cloudpss/zstd', '@cloudpss/zstd/*'],
      logLevel: 'error',
    });
    const child = await run(
      process.execPath,
      // The server's young-generation flag, allocator settings (package.json "start") and its young collections while
      // busy (--expose-gc: the child runs them), so the figure is the server's on Node 20 and Node 24 alike.
      ['--max-old-space-size=256', '--max-semi-space-size=2', '--expose-gc', join(packageDir, 'test', 'support', 'memory-child.mjs'), bundle, String(1024 * MiB), String(512 * MiB)],
      { maxBuffer: MiB, timeout: 540_000, env: { ...process.env, MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' } },
    );
    const report = JSON.parse(child.stdout) as { baseline: number; peak: number; written: number; archiveSize: number };
    process.stdout.write(`memory child: baseline ${(report.baseline / MiB).toFixed(1)} MiB, peak ${(report.peak / MiB).toFixed(1)} MiB\n`);
    expect(report.written).toBe(report.archiveSize);
    expect(report.written).toBeGreaterThan(1024 * MiB);
    // 1.5 GiB went through; a writer that buffered members would be far above these bounds.
    expect(report.peak - report.baseline).toBeLessThan(96 * MiB);
    expect(report.peak).toBeLessThan(200 * MiB);
  });
});
