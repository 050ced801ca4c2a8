// `npm start`'s build: transpile every workspace package's src/**/*.ts to dist/**/*.js in this one process with
// esbuild, without type checking. One tsc per package took about two minutes on a 2-core machine for 19 packages
// and grew with every package; this takes seconds. `npm test` and CI still run the full tsc build (turbo run build),
// so a type error keeps failing the tests: this script only makes a runnable dist, never a checked one.
//
// Output matches tsc's for these packages: the same dist/ paths (rootDir src, outDir dist), ESM with the `.js`
// import specifiers the sources already carry, legacy decorators (tsyringe's @injectable/@inject; no decorator
// metadata, as tooling/tsconfig/base.json says), ES2022 class fields, and source maps. Declarations (.d.ts) are not
// written: nothing at run time needs them, and the tsc build writes them.
//
// A file is skipped when its .js is newer than its .ts, so a second start transpiles nothing.
//
// esbuild rather than SWC: vite already brings it (the same version is a root devDependency), it emits legacy
// decorators as tsc does, and decorator metadata, the one thing SWC adds, is off in every package here.
//
// Packages built with Vite (apps/web: `tsc --noEmit && vite build`) get the `vite build` half, in this process
// too, when their dist/index.html is older than their sources or their workspace dependencies' sources; the type
// check half stays in the full build.
// Usage: node tooling/scripts/build-fast.mjs [--quiet]
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';

const root = fileURLToPath(new URL('../..', import.meta.url));
const quiet = process.argv.includes('--quiet');

// Only packages built exactly this way are tsc-equivalent here; any other build (apps/web's vite) is left alone.
const TSC_BUILD = 'tsc -p tsconfig.build.json';

// What tsc's settings in tooling/tsconfig/base.json mean for emitted JavaScript.
const TSCONFIG_RAW = {
  compilerOptions: {
    target: 'ES2022',
    experimentalDecorators: true,
    emitDecoratorMetadata: false,
    useDefineForClassFields: true,
    verbatimModuleSyntax: false,
  },
};

async function workspaceDirectories() {
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
  const dirs = [];
  for (const pattern of manifest.workspaces) {
    if (!pattern.endsWith('/*')) {
      dirs.push(join(root, pattern));
      continue;
    }
    const parent = join(root, pattern.slice(0, -2));
    for (const entry of (await readdir(parent, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isDirectory()) dirs.push(join(parent, entry.name));
    }
  }
  return dirs;
}

async function manifestOf(dir) {
  try {
    return JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
  } catch {
    return undefined;
  }
}

/** Newest modification time of any file under `path` (a file or a directory); -1 when nothing is there. */
async function newestMtime(path) {
  const info = await stat(path).catch(() => undefined);
  if (!info) return -1;
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs;
  for (const entry of await readdir(path, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) newest = Math.max(newest, (await stat(join(entry.parentPath, entry.name))).mtimeMs);
  }
  return newest;
}

/** Runs `vite build` for `dir` unless its dist/index.html is newer than everything it is built from. */
async function viteBuild(dir, manifest, workspaceByName) {
  const inputs = ['src', 'index.html', 'package.json', 'vite.config.ts', 'vite.config.mjs', 'vite.config.js'].map((entry) => join(dir, entry));
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    const dependency = workspaceByName.get(name);
    if (dependency) inputs.push(join(dependency, 'src'));
  }
  const newestInput = Math.max(...(await Promise.all(inputs.map(newestMtime))));
  if ((await mtimeOf(join(dir, 'dist', 'index.html'))) >= newestInput) return false;
  // Imported only when needed, so a start with a fresh web build costs nothing here.
  const { build } = await import('vite');
  await build({ root: dir, logLevel: quiet ? 'error' : 'warn' });
  return true;
}

async function sourceFiles(srcDir) {
  const entries = await readdir(srcDir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

const mtimeOf = (path) => stat(path).then((info) => info.mtimeMs, () => -1);

async function transpile(source, srcDir, distDir) {
  const out = join(distDir, relative(srcDir, source)).replace(/\.ts$/, '.js');
  if ((await mtimeOf(out)) >= (await mtimeOf(source))) return false;
  const code = await readFile(source, 'utf8');
  const mapName = `${out.split(sep).pop()}.map`;
  const result = await transform(code, {
    loader: 'ts',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'external',
    sourcefile: relative(dirname(out), source).split(sep).join('/'),
    tsconfigRaw: TSCONFIG_RAW,
  });
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, `${result.code}//# sourceMappingURL=${mapName}\n`);
  await writeFile(`${out}.map`, result.map);
  return true;
}

const started = performance.now();
let packages = 0;
let written = 0;
let total = 0;
const failures = [];
const viteBuilt = [];
const manifests = new Map();
for (const dir of await workspaceDirectories()) {
  const manifest = await manifestOf(dir);
  if (manifest) manifests.set(dir, manifest);
}
const workspaceByName = new Map([...manifests].map(([dir, manifest]) => [manifest.name, dir]));
for (const [dir, manifest] of manifests) {
  if (manifest.scripts?.build !== TSC_BUILD) continue;
  packages += 1;
  const srcDir = join(dir, 'src');
  const distDir = join(dir, 'dist');
  const files = await sourceFiles(srcDir);
  total += files.length;
  const results = await Promise.allSettled(files.map((file) => transpile(file, srcDir, distDir)));
  results.forEach((result, index) => {
    if (result.status === 'rejected') failures.push(`${relative(root, files[index])}: ${result.reason?.message ?? result.reason}`);
    else if (result.value) written += 1;
  });
}
if (failures.length > 0) {
  process.stderr.write(`build-fast: ${failures.length} file(s) failed to transpile:\n${failures.join('\n')}\n`);
  process.exit(1);
}
// After the transpile: a web app imports workspace packages (the client) through their dist/.
for (const [dir, manifest] of manifests) {
  if (!/\bvite build\b/.test(manifest.scripts?.build ?? '')) continue;
  try {
    if (await viteBuild(dir, manifest, workspaceByName)) viteBuilt.push(manifest.name);
  } catch (error) {
    process.stderr.write(`build-fast: vite build of ${manifest.name} failed: ${error.message}\n`);
    process.exit(1);
  }
}
if (!quiet) {
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const web = viteBuilt.length > 0 ? `, vite build of ${viteBuilt.join(', ')}` : '';
  process.stdout.write(`build-fast: ${packages} packages, ${written} of ${total} files transpiled${web} in ${seconds} s\n`);
}
