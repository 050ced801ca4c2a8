// The rule functions must catch what they claim to: each violation below is one a real package could commit.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  adapterIdBranchViolations,
  adapterViolations,
  databaseClientViolations,
  databaseHandleCastViolations,
  escapingImportViolations,
  kernelViolations,
  packageHygieneViolations,
  platformViolations,
  pluginViolations,
} from './rules.js';
import { expandWorkspacePatterns, importsOf, type Manifest, type SourceImport, type WorkspacePackage } from './workspace.js';

function pkg(dir: string, manifest: Manifest, imports: SourceImport[] = [], hasReadme = true): WorkspacePackage {
  return { dir, name: manifest.name ?? dir, manifest: { version: '0.1.0', ...manifest }, hasReadme, imports };
}

const goodAdapter: Manifest = {
  name: '@holdfast/storage-local',
  holdfast: { kind: 'storage', id: 'local' },
  peerDependencies: { '@holdfast/sdk': '^0.1.0' },
  dependencies: { 'ssh2-sftp-client': '12.0.1' },
  devDependencies: { '@holdfast/testkit': '^0.1.0' },
};

describe('kernel rule', () => {
  it('names each framework, ORM and Holdfast dependency of the kernel', () => {
    const kernel = pkg('kernel', {
      name: '@holdfast/kernel',
      dependencies: { zod: '4.6.7', koa: '3.3.0', '@mikro-orm/core': '6.6.16' },
      peerDependencies: { '@koa/router': '15.7.0' },
      devDependencies: { 'koa-body': '8.0.1', '@holdfast/sdk': '^0.1.0', '@holdfast/tooling': '0.1.0' },
    });
    expect(kernelViolations(kernel)).toEqual([
      '@holdfast/kernel must not depend on koa (found in dependencies)',
      '@holdfast/kernel must not depend on @mikro-orm/core (found in dependencies)',
      '@holdfast/kernel must not depend on @koa/router (found in peerDependencies)',
      '@holdfast/kernel must not depend on koa-body (found in devDependencies)',
      '@holdfast/kernel must not depend on @holdfast/sdk (found in devDependencies)',
    ]);
  });

  it('flags a kernel import of an undeclared package', () => {
    const kernel = pkg('kernel', { name: '@holdfast/kernel', dependencies: { zod: '4.6.7' } }, [
      { file: 'src/a.ts', specifier: 'zod' },
      { file: 'src/a.ts', specifier: 'node:stream' },
      { file: 'src/b.ts', specifier: 'pino' },
    ]);
    expect(kernelViolations(kernel)).toEqual(['@holdfast/kernel src/b.ts imports pino, which is not one of its dependencies']);
  });
});

describe('adapter rule', () => {
  it('accepts a well-formed adapter, including the notify- folder of a notification kind', () => {
    expect(adapterViolations(pkg('adapters/storage-local', goodAdapter))).toEqual([]);
    const webhook = pkg('adapters/notify-generic-webhook', {
      ...goodAdapter,
      name: '@holdfast/notify-generic-webhook',
      holdfast: { kind: 'notification', id: 'generic-webhook' },
      dependencies: {},
    });
    expect(adapterViolations(webhook)).toEqual([]);
  });

  it('names a folder or package name that is not the one adapter name <prefix><id>', () => {
    const renamed = { ...goodAdapter, name: '@holdfast/notify-webhook', holdfast: { kind: 'notification', id: 'generic-webhook' }, dependencies: {} };
    expect(adapterViolations(pkg('adapters/notify-webhook', renamed))).toEqual([
      '@holdfast/notify-webhook has id "generic-webhook", so its folder must be "notify-generic-webhook" (is "notify-webhook")',
    ]);
    expect(adapterViolations(pkg('adapters/notify-generic-webhook', renamed))).toEqual([
      '@holdfast/notify-webhook must be named @holdfast/notify-generic-webhook',
    ]);
  });

  it('names a missing block, a folder that does not match the kind and a bad id', () => {
    expect(adapterViolations(pkg('adapters/storage-x', { ...goodAdapter, holdfast: undefined }))).toEqual([
      '@holdfast/storage-local has no "holdfast": { "kind", "id" } block in package.json',
    ]);
    expect(adapterViolations(pkg('adapters/storage-x', { ...goodAdapter, holdfast: { kind: 'source', id: 'Bad_Id' } }))).toEqual([
      '@holdfast/storage-local is a source adapter, so its folder must start with "source-" (is "storage-x")',
      '@holdfast/storage-local declares holdfast id "Bad_Id", which is not kebab-case',
    ]);
    expect(adapterViolations(pkg('adapters/storage-x', { ...goodAdapter, holdfast: { kind: 'database', id: 'x' } }))).toEqual([
      '@holdfast/storage-local declares unknown holdfast kind "database"',
    ]);
  });

  it('names an sdk that is not a ^0.x peer and any other Holdfast dependency', () => {
    const adapter = pkg('adapters/storage-local', {
      ...goodAdapter,
      peerDependencies: { '@holdfast/sdk': 'workspace:^' },
      dependencies: { '@holdfast/sdk': '^0.1.0', '@holdfast/persistence': '^0.1.0' },
      devDependencies: { '@holdfast/testkit': '^0.1.0', '@holdfast/kernel': '^0.1.0' },
    });
    expect(adapterViolations(adapter)).toEqual([
      '@holdfast/storage-local must depend on @holdfast/sdk with a "^0.x" range (has "workspace:^")',
      '@holdfast/storage-local must not depend on @holdfast/sdk (found in dependencies); adapters reach Holdfast only through @holdfast/sdk',
      '@holdfast/storage-local must not depend on @holdfast/persistence (found in dependencies); adapters reach Holdfast only through @holdfast/sdk',
      '@holdfast/storage-local must not depend on @holdfast/kernel (found in devDependencies); adapters reach Holdfast only through @holdfast/sdk',
    ]);
    expect(adapterViolations(pkg('adapters/storage-local', { ...goodAdapter, peerDependencies: {} }))).toEqual([
      '@holdfast/storage-local must list @holdfast/sdk in peerDependencies',
    ]);
  });

  it('allows sdk, builtins, relative paths and own dependencies in src imports, and names the rest', () => {
    const adapter = pkg('adapters/storage-local', goodAdapter, [
      { file: 'src/index.ts', specifier: '@holdfast/sdk' },
      { file: 'src/index.ts', specifier: './config.js' },
      { file: 'src/local-storage.ts', specifier: 'node:fs/promises' },
      { file: 'src/local-storage.ts', specifier: 'fs' },
      { file: 'src/local-storage.ts', specifier: 'ssh2-sftp-client/lib/x.js' },
      { file: 'src/config.ts', specifier: 'zod' },
      { file: 'src/local-storage.ts', specifier: 'tsyringe' },
      { file: 'src/internal/x.ts', specifier: 'lodash' },
      { file: 'src/internal/y.ts', specifier: '@holdfast/testkit' },
    ]);
    expect(adapterViolations(adapter)).toEqual([
      '@holdfast/storage-local src/config.ts imports zod directly; import it from @holdfast/sdk',
      '@holdfast/storage-local src/local-storage.ts imports tsyringe directly; import it from @holdfast/sdk',
      '@holdfast/storage-local src/internal/x.ts imports lodash, which is not one of its own dependencies',
      '@holdfast/storage-local src/internal/y.ts imports @holdfast/testkit, which is not one of its own dependencies',
    ]);
  });
});

describe('plugin rule', () => {
  it('names a dependency on and an import of another plugin, but not of the kernel', () => {
    const catalog = pkg('plugins/catalog', { name: '@holdfast/catalog', dependencies: { '@holdfast/kernel': '^0.1.0', '@holdfast/identity': '^0.1.0' } }, [
      { file: 'src/a.ts', specifier: '@holdfast/kernel' },
      { file: 'src/b.ts', specifier: '@holdfast/persistence/internal' },
    ]);
    const plugins = [catalog, pkg('plugins/identity', { name: '@holdfast/identity' }), pkg('plugins/persistence', { name: '@holdfast/persistence' })];
    expect(pluginViolations(catalog, plugins)).toEqual([
      '@holdfast/catalog must not depend on plugin @holdfast/identity (found in dependencies); use a kernel token',
      '@holdfast/catalog src/b.ts imports plugin @holdfast/persistence/internal; use a kernel token',
    ]);
  });

  it('names a relative import that leaves its package', () => {
    const engine = pkg('plugins/engine', { name: '@holdfast/engine' }, [
      { file: 'src/runner/stage.ts', specifier: '../queue.js' },
      { file: 'src/runner/stage.ts', specifier: '../../../identity/src/users.js' },
    ]);
    expect(escapingImportViolations(engine)).toEqual([
      '@holdfast/engine src/runner/stage.ts imports ../../../identity/src/users.js, which leaves the package (resolves to plugins/identity/src/users.js)',
    ]);
  });
});

describe('package hygiene rule', () => {
  it('names a missing README and a version outside 0.x', () => {
    expect(packageHygieneViolations(pkg('apps/web', { name: '@holdfast/web', version: '1.0.0' }, [], false))).toEqual([
      '@holdfast/web (apps/web) has no README.md',
      '@holdfast/web has version "1.0.0"; packages stay on 0.x',
    ]);
    expect(packageHygieneViolations(pkg('apps/web', { name: '@holdfast/web', version: '0.3.1' }))).toEqual([]);
  });
});

describe('workspace reading', () => {
  let root: string | undefined;
  afterEach(async () => {
    if (root) await rm(root, { recursive: true, force: true });
    root = undefined;
  });

  it('expands plain and * patterns to directories holding a package.json', async () => {
    root = await mkdtemp(join(tmpdir(), 'hf-workspace-'));
    for (const dir of ['kernel', 'adapters/storage-a', 'adapters/notify-b', 'adapters/not-a-package']) {
      await mkdir(join(root, dir), { recursive: true });
      if (dir !== 'adapters/not-a-package') await writeFile(join(root, dir, 'package.json'), '{}');
    }
    expect(await expandWorkspacePatterns(root, ['kernel', 'adapters/*', 'apps/*'])).toEqual([
      'adapters/notify-b',
      'adapters/storage-a',
      'kernel',
    ]);
    await expect(expandWorkspacePatterns(root, ['packages/**'])).rejects.toThrow('workspace pattern "packages/**" is not understood');
  });

  it('finds static, type-only, re-exported, side-effect and dynamic imports', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '@holdfast/sdk';",
      "export * from 'zod';",
      "import 'reflect-metadata';",
      "const m = await import('node:fs');",
      '// import x from "commented-out";',
    ].join('\n');
    expect(importsOf(text)).toEqual(['./a.js', '@holdfast/sdk', 'zod', 'reflect-metadata', 'node:fs']);
  });
});

describe('adapter-id branch rule', () => {
  const engine = pkg('plugins/engine', { name: '@holdfast/engine' });

  it('names each comparison of an adapter id with a literal, in either order, by file and line', () => {
    const files = [
      { file: 'src/a.ts', text: "const x = 1;\nif (config.adapterId === 'postgres') return postgresScratch;" },
      { file: 'src/b.ts', text: "if (source.adapterId !== \"redis\") throw new Error('no');\nif ('sqlite' == jobSource.adapterId) go();" },
    ];
    expect(adapterIdBranchViolations(engine, files).map((problem) => problem.split(' compares')[0])).toEqual([
      '@holdfast/engine src/a.ts:2',
      '@holdfast/engine src/b.ts:1',
      '@holdfast/engine src/b.ts:2',
    ]);
  });

  it('accepts looking an adapter up by its id and comparing ids with each other', () => {
    const files = [
      { file: 'src/c.ts', text: "registry.require('source', config.adapterId);\nif (a.adapterId === b.adapterId) same();\nconst label = `${kind}-${config.adapterId}`;" },
    ];
    expect(adapterIdBranchViolations(engine, files)).toEqual([]);
  });
});

describe('database client rule', () => {
  it('names a database client among a plugin\'s runtime dependencies, not its dev dependencies or the ORM', () => {
    const engine = pkg('plugins/engine', {
      name: '@holdfast/engine',
      dependencies: { pg: '8.23.1', '@mikro-orm/postgresql': '6.6.16', cron: '4.4.0' },
      optionalDependencies: { ioredis: '5.11.1' },
      devDependencies: { mysql2: '3.24.6' },
    });
    expect(databaseClientViolations(engine)).toEqual([
      '@holdfast/engine must not depend on the database client pg (found in dependencies); a source adapter\'s scratch capability talks to its database',
      '@holdfast/engine must not depend on the database client ioredis (found in optionalDependencies); a source adapter\'s scratch capability talks to its database',
    ]);
  });
});

describe('database handle cast rule', () => {
  const identity = pkg('plugins/identity', { name: '@holdfast/identity' });

  it('names each cast of the ORM handle by file and line', () => {
    const files = [
      { file: 'src/m.ts', text: "export const m = {\n  async up(builder) {\n    const knex = builder as Knex;\n  },\n};" },
      { file: 'src/r.ts', text: 'const knex = (this.database.em() as SqlEntityManager).getKnex();\nconst em = orm.em as unknown as EntityManager;' },
      { file: 'src/w.ts', text: 'return this.database.em().getKnex().client as KnexClient;' },
    ];
    expect(databaseHandleCastViolations(identity, files).map((problem) => problem.split(' casts')[0])).toEqual([
      '@holdfast/identity src/m.ts:3',
      '@holdfast/identity src/r.ts:1',
      '@holdfast/identity src/r.ts:2',
      '@holdfast/identity src/w.ts:1',
    ]);
  });

  it('accepts typed handles, value casts and prose', () => {
    const files = [
      {
        file: 'src/ok.ts',
        text: [
          "export const m = defineMigration('x', async (knex) => knex.schema.dropTable('t'));",
          'const value = platform.processDateProperty(date) as Knex.Value;',
          ' * The handle, typed as EntityManager by the port.',
          'const client = pgClient(database);',
        ].join('\n'),
      },
    ];
    expect(databaseHandleCastViolations(identity, files)).toEqual([]);
  });
});

describe('platform rule', () => {
  const plugins = [pkg('plugins/http', { name: '@holdfast/http' }), pkg('plugins/persistence', { name: '@holdfast/persistence' })];

  it('names a plugin among any dependency field of a platform package, and an import of one', () => {
    const boot = pkg(
      'platform/boot',
      { name: '@holdfast/boot', dependencies: { '@holdfast/http': '^0.1.0', '@holdfast/kernel': '^0.1.0' }, devDependencies: { '@holdfast/persistence': '^0.1.0' } },
      [
        { file: 'src/compose.ts', specifier: '@holdfast/persistence' },
        { file: 'src/compose.ts', specifier: '@holdfast/database' },
      ],
    );
    expect(platformViolations(boot, plugins)).toEqual([
      '@holdfast/boot must not depend on plugin @holdfast/http (found in dependencies); platform packages stand below the plugins',
      '@holdfast/boot must not depend on plugin @holdfast/persistence (found in devDependencies); platform packages stand below the plugins',
      '@holdfast/boot src/compose.ts imports plugin @holdfast/persistence; platform packages stand below the plugins',
    ]);
  });

  it('accepts the kernel and other platform packages', () => {
    const boot = pkg('platform/boot', { name: '@holdfast/boot', dependencies: { '@holdfast/kernel': '^0.1.0', '@holdfast/http-server': '^0.1.0' } }, [
      { file: 'src/compose.ts', specifier: '@holdfast/http-server' },
    ]);
    expect(platformViolations(boot, plugins)).toEqual([]);
  });
});
