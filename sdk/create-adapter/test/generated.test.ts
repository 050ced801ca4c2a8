import { readFile, rm, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { container } from 'tsyringe';
import { instantiateAdapter, isAdapterError } from '@holdfast/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCAFFOLD_KINDS, type ScaffoldKind } from '../src/index.js';
import { BIN, runCommand, runNode, TSC, VITEST } from './helpers.js';

/** How an unwritten adapter refused: the error code (when it threw) and the message. */
interface Refusal {
  code?: string;
  message: string;
}

async function refusalOf(call: () => unknown): Promise<Refusal> {
  try {
    await call();
  } catch (error) {
    expect(isAdapterError(error), `not an AdapterError: ${String(error)}`).toBe(true);
    return { code: (error as { code: string }).code, message: (error as Error).message };
  }
  throw new Error('the unwritten method resolved as if it worked');
}

// For each kind: a config its generated schema accepts, and one call that must refuse to pretend.
const probes: Record<ScaffoldKind, { config: unknown; refusal: (instance: never) => Promise<Refusal> }> = {
  source: {
    config: { port: 5432, username: 'backup' },
    refusal: (source: { listDatabases(): Promise<string[]> }) => refusalOf(() => source.listDatabases()),
  },
  storage: {
    config: { endpoint: 'https://storage.example.com', accessToken: 't' },
    refusal: (storage: { stat(key: string): Promise<unknown> }) => refusalOf(() => storage.stat('a/b')),
  },
  notification: {
    config: { endpointUrl: 'https://notify.example.com' },
    // The channel contract forbids throwing, so the refusal arrives as a value.
    refusal: async (channel: { test(): Promise<{ success: boolean; message: string }> }) => {
      const result = await channel.test();
      expect(result.success).toBe(false);
      return { code: 'UNSUPPORTED', message: result.message };
    },
  },
  retention: {
    config: {},
    refusal: (strategy: { select(b: unknown[], now: Date, tz: string): unknown }) =>
      refusalOf(() => strategy.select([], new Date(), 'UTC')),
  },
  naming: {
    config: {},
    refusal: (strategy: { render(p: string, c: unknown): string }) => refusalOf(() => strategy.render('{job}', {})),
  },
};

let root: string;
const dirOf = (kind: ScaffoldKind) => join(root, `holdfast-${kind}-my-cloud`);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hf-create-adapter-'));
  for (const kind of SCAFFOLD_KINDS) {
    const result = await runNode([BIN, '--kind', kind, '--id', 'my-cloud'], { cwd: root });
    expect(result.code, result.stderr).toBe(0);
  }
  // As an author would: the scaffolder ran from this installation, so the devDependencies are file: links to its
  // sdk, testkit, vitest and typescript, and an offline install needs no registry.
  await Promise.all(
    SCAFFOLD_KINDS.map(async (kind) => {
      const install = await runCommand('npm', ['install', '--offline', '--no-audit', '--no-fund'], { cwd: dirOf(kind) });
      expect(install.code, install.stderr).toBe(0);
    }),
  );
}, 120_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('generated adapter packages', () => {
  it.each(SCAFFOLD_KINDS)('%s: package.json carries the holdfast block and the right dependencies', async (kind) => {
    const pkg = JSON.parse(await readFile(join(dirOf(kind), 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({
      name: `holdfast-${kind}-my-cloud`,
      version: '0.1.0',
      type: 'module',
      holdfast: { kind, id: 'my-cloud' },
      peerDependencies: { '@holdfast/sdk': '^0.1.0' },
    });
    expect(Object.keys(pkg.dependencies ?? {})).toEqual([]);
    expect(Object.keys(pkg.devDependencies).sort()).toEqual(
      ['@holdfast/sdk', '@holdfast/testkit', '@types/node', 'reflect-metadata', 'typescript', 'vitest'].sort(),
    );
    for (const spec of Object.values(pkg.devDependencies)) expect(spec).toMatch(/^file:\//);
    const tsconfig = await readFile(join(dirOf(kind), 'tsconfig.json'), 'utf8');
    expect(tsconfig).not.toContain('extends');
    const implementation = await readFile(join(dirOf(kind), `src/my-cloud-${kind}.ts`), 'utf8');
    expect(implementation).toContain('@inject(TOKENS.AdapterConfig)');
    expect(implementation).toContain('@inject(TOKENS.AdapterContext)');
    expect(implementation).toMatch(/@injectable\(\)\nexport class MyCloud\w+ implements/);
  });

  it('all five build and typecheck (tests included) with tsc', async () => {
    const projects = SCAFFOLD_KINDS.flatMap((kind) => [
      join(dirOf(kind), 'tsconfig.build.json'),
      join(dirOf(kind), 'tsconfig.json'),
    ]);
    const result = await runNode([TSC, '-b', ...projects], { timeoutMs: 90_000 });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.code).toBe(0);
    for (const kind of SCAFFOLD_KINDS) {
      const built = await import(pathToFileURL(join(dirOf(kind), 'dist/index.js')).href);
      expect(built.default).toMatchObject({ brand: 'holdfast.adapter', kind, id: 'my-cloud', displayName: 'My Cloud' });
    }
  });

  it.each(SCAFFOLD_KINDS)('%s: unwritten methods refuse with UNSUPPORTED instead of pretending', async (kind) => {
    const { default: definition } = await import(pathToFileURL(join(dirOf(kind), 'src/index.ts')).href);
    const instance = instantiateAdapter(container, definition, probes[kind].config);
    const refusal = await probes[kind].refusal(instance as never);
    expect(refusal.code).toBe('UNSUPPORTED');
    expect(refusal.message).toMatch(new RegExp(`^\\[${kind}-my-cloud\\] not written yet: \\w+\\(\\)`));
  });

  it.concurrent.each(SCAFFOLD_KINDS)('%s: its generated conformance test passes untouched', async (kind) => {
    const report = join(dirOf(kind), 'vitest-report.json');
    const result = await runNode(
      [VITEST, 'run', '--root', dirOf(kind), '--reporter=json', `--outputFile=${report}`],
      { cwd: dirOf(kind), timeoutMs: 90_000 },
    );
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    const summary = JSON.parse(await readFile(report, 'utf8'));
    expect(summary.numFailedTests).toBe(0);
    expect(summary.numPassedTests).toBeGreaterThan(0);
    expect(summary.numPassedTests).toBe(summary.numTotalTests);
  });
});
