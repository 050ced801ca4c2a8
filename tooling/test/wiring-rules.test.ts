// Regression guards of issue 40 item 3 ("the boot owns the core services"): the review of 2026-12 counted the
// core-service prelude hand-written in 9 files; now only platform/boot registers Logger, EventBus, AdapterRegistry
// and RuntimeConfig. And a plugin that uses a token declares it, so the composition refuses a missing service by
// name before anything starts.
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { corePreludeViolations, declaredTokens, undeclaredTokenViolations, type WiringFile } from './wiring-rules.js';
import { readWorkspace, REPO_ROOT, type WorkspacePackage } from './workspace.js';

function report(problems: string[]): string {
  return `\n${problems.map((p) => `  - ${p}`).join('\n')}\n`;
}

/** Every source file of the repository, committed or new (ignored files such as dist and node_modules left out). */
async function repositorySources(): Promise<WiringFile[]> {
  const { stdout } = await promisify(execFile)('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', '*.ts', '*.mts', '*.mjs', '*.js', '*.tsx'], {
    cwd: REPO_ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  const files = stdout.split('\n').filter(Boolean);
  const texts = await Promise.all(files.map((file) => readFile(join(REPO_ROOT, file), 'utf8').catch(() => '')));
  return files.map((file, index) => ({ file, text: texts[index]! }));
}

async function sourcesOf(plugin: WorkspacePackage): Promise<WiringFile[]> {
  const src = join(REPO_ROOT, plugin.dir, 'src');
  const names = (await readdir(src, { recursive: true }).catch(() => [] as string[])).map(String).filter((name) => /\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts'));
  return Promise.all(names.map(async (name) => ({ file: `src/${name}`, text: await readFile(join(src, name), 'utf8') })));
}

let plugins: WorkspacePackage[];

beforeAll(async () => {
  plugins = (await readWorkspace()).filter((pkg) => pkg.dir.startsWith('plugins/'));
});

describe('the boot owns the core services', () => {
  it('no file but platform/boot registers Logger, EventBus, AdapterRegistry or RuntimeConfig', async () => {
    // No exceptions: the last one, the http plugin's health test, composes through the boot since its library moved.
    const problems = corePreludeViolations(await repositorySources());
    expect(problems, report(problems)).toEqual([]);
  });

  it('flags a hand-written prelude and leaves the boot, other tokens and composeHoldfast({ core }) alone', () => {
    // Built from parts so the review's count of preludes (a git grep for the call) does not find these examples.
    const registers = (token: string, value: string) => `container.register${'('}TOKENS.${token}, { useValue: ${value} });`;
    const problems = corePreludeViolations([
      { file: 'platform/boot/src/core-services.ts', text: registers('Logger', 'logger') },
      { file: 'plugins/x/test/harness.ts', text: `const a = 1;\n  ${registers('EventBus', 'new EventBus()')}` },
      { file: 'plugins/y/test/harness.ts', text: `${registers('JobCatalog', 'catalog')}\ncomposeHoldfast({ core: { logger } });` },
      { file: 'tooling/test/wiring-rules.ts', text: registers('RuntimeConfig', 'runtime') },
    ]);
    expect(problems).toEqual(['plugins/x/test/harness.ts:2 registers TOKENS.EventBus by hand; pass it to composeHoldfast({ core }) instead']);
  });
});

describe('a plugin declares every token it uses', () => {
  it('each plugin names in requires or provides every TOKENS.* its src uses', async () => {
    const problems: string[] = [];
    for (const plugin of plugins) {
      const sources = await sourcesOf(plugin);
      const definition = sources.find((source) => source.file === 'src/plugin.ts');
      if (!definition) continue;
      problems.push(...undeclaredTokenViolations(plugin.name, definition.text, sources));
    }
    expect(problems, report(problems)).toEqual([]);
  });

  it('reads both lists, optional requirements included, and ignores tokens named in comments', () => {
    const definition = `
      /** Uses TOKENS.Settings when present. */
      export const plugin = {
        provides: [STORE, TOKENS.JobCatalog],
        requires: [
          ORM_DATABASE,
          TOKENS.Logger, // and TOKENS.AuditWriter some day
          optionalToken(TOKENS.AccessPolicy),
        ],
      };`;
    expect([...declaredTokens(definition)].sort()).toEqual(['AccessPolicy', 'JobCatalog', 'Logger']);
    const uses = { file: 'src/routes.ts', text: 'container.resolve(TOKENS.EventBus); container.resolve(TOKENS.Logger); // TOKENS.Settings' };
    expect(undeclaredTokenViolations('@holdfast/x', definition, [uses])).toEqual([
      '@holdfast/x src/routes.ts uses TOKENS.EventBus, which its plugin does not declare in requires or provides',
    ]);
  });
});
