// Copies what the Holdfast server and CLI need at run time into one folder, for the container image's final stage:
// the workspace packages' published files (their package.json `files`, so dist/ but not src/ or test/) and the
// third-party packages they load, found by walking `dependencies`, `optionalDependencies` and `peerDependencies`
// the way Node resolves them. Dev dependencies, the web app's build-time dependencies (it is served as static
// files), type declarations, source maps and TypeScript sources are left behind, and an optional package built for
// another platform (libsql's musl binary on glibc) is skipped, as npm skips it.
//
// Why not `npm ci --omit=dev`: it would install the web app's React/Mantine tree and every package's test helpers
// (about 250 MB on disk before pruning), and a second install costs a second resolution pass in the build.
// Usage: node tooling/container/stage-runtime.mjs <out-dir>   (from the repository root, after the build)
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, symlinkSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const out = resolve(process.argv[2] ?? '');
if (!process.argv[2]) {
  process.stderr.write('usage: node tooling/container/stage-runtime.mjs <out-dir>\n');
  process.exit(2);
}
// What the image runs: the CLI (`holdfast serve`, `migrate`, `admin ...`) and the server it starts.
const ENTRY_PACKAGES = ['apps/cli', 'apps/server'];
// Served as static files by the server: its dist is copied, its dependencies are build-time only.
const FILES_ONLY = new Set(['@holdfast/web']);
// Files a running process never reads. `.md` is dropped only from third-party packages: the recovery kit
// (@holdfast/recovery-kit) ships a README the engine reads at run time.
const NEVER = /(\.d\.[cm]?ts|\.map|\.tsbuildinfo)$/;
const NEVER_THIRD_PARTY = /(\.[cm]?ts|\.md|\.markdown|\.(c|cc|cpp|h|hh|hpp|o|gyp|gypi)|\.(min|bc)\.js)$/i;
// Folders at a third-party package's root that hold no run-time code (tests, benchmarks, examples, docs). Licences
// stay; nested folders of these names stay too (a few packages keep code in them).
const ROOT_FOLDERS_NEVER = new Set(['test', 'tests', '__tests__', 'benchmark', 'benchmarks', 'example', 'examples', 'doc', 'docs', '.github', 'coverage']);
// Builds for other runtimes or module systems: dropped wherever they are, unless the package's `main` or its
// `exports` resolved with Node's conditions leads into one (so `esm/` stays where Node imports it, `dist-es/`
// of the AWS SDK goes: its `node` condition comes before `import` and names `dist-cjs/`).
const OTHER_BUILDS = new Set(['browser', 'react-native', 'workerd', 'deno', 'bun', 'umd', 'esm', 'es', 'dist-es', 'dist-types', 'dist-browser']);
const NODE_CONDITIONS = [new Set(['node', 'import', 'module-sync', 'default']), new Set(['node', 'require', 'module-sync', 'default'])];
// Dependencies that only a package's browser build loads (checked below: staging fails if a staged file names one).
const BROWSER_ONLY = new Set(['@azure/msal-browser']);

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));
const isLibcMusl = false; // the image is Debian (glibc)

// Prebuilt binaries for every platform (prebuildify's prebuilds/<platform>-<arch>/): only this one is kept.
const PREBUILDS = `${sep}prebuilds${sep}`;
const THIS_PLATFORM = `${process.platform}-${process.arch}`;
const isOtherPlatformPrebuild = (path) => {
  const at = path.lastIndexOf(PREBUILDS);
  if (at < 0) return false;
  const [folder, file] = path.slice(at + PREBUILDS.length).split(sep);
  // One folder may hold both C libraries' builds (@cloudpss/zstd: `...musl,true.node` next to `...glibc,true.node`).
  return (folder !== '' && folder !== THIS_PLATFORM) || (!isLibcMusl && file !== undefined && /musl/.test(file));
};
// node-gyp's intermediate files: the addon itself is build/Release/<name>.node, next to obj.target/ and .deps/.
const BUILD_INTERMEDIATES = new Set(['obj.target', '.deps']);

function matchesPlatform(manifest) {
  // Packages that mark their libc only by name (libsql's @libsql/linux-x64-musl has no `libc` field).
  if (!isLibcMusl && /-musl$/.test(manifest.name)) return false;
  const allowed = (list, value) => !Array.isArray(list) || list.length === 0 ||
    (list.includes(value) || (list.some((entry) => entry.startsWith('!')) && !list.includes(`!${value}`)));
  const libc = isLibcMusl ? 'musl' : 'glibc';
  return allowed(manifest.os, process.platform) && allowed(manifest.cpu, process.arch) && allowed(manifest.libc, libc);
}

/** Node's lookup: <dir>/node_modules/<name>, then the same in each parent, up to the repository root. */
function locate(name, fromDir) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === root || dirname(dir) === dir) return undefined;
  }
}

/** The files Node can resolve as the package's entry points: `main` and `exports` under Node's conditions. */
function entryPoints(manifest) {
  const found = [];
  const walk = (target, conditions) => {
    if (typeof target === 'string') found.push(target);
    else if (Array.isArray(target)) for (const item of target) walk(item, conditions);
    else if (target && typeof target === 'object') {
      const keys = Object.keys(target);
      if (keys.some((key) => key.startsWith('.'))) for (const key of keys) walk(target[key], conditions);
      else {
        // Node takes the first key, in the object's order, that is one of its conditions.
        const key = keys.find((candidate) => conditions.has(candidate));
        if (key !== undefined) walk(target[key], conditions);
      }
    }
  };
  for (const conditions of NODE_CONDITIONS) walk(manifest.exports, conditions);
  if (typeof manifest.main === 'string') found.push(manifest.main);
  return found.map((entry) => entry.replace(/^\.\//, ''));
}

/** True when the folder `inside` (relative to the package) is another runtime's build that no entry point leads into. */
function isOtherBuild(inside, entries) {
  if (!OTHER_BUILDS.has(basename(inside))) return false;
  const folder = `${inside.split(sep).join('/')}/`;
  return !entries.some((entry) => entry.startsWith(folder));
}

const copiedDirs = new Set();
function copyFiltered(from, to, isThirdParty, manifest) {
  const entries = isThirdParty && (manifest.exports !== undefined || manifest.main !== undefined) ? entryPoints(manifest) : undefined;
  cpSync(from, to, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => {
      const inside = relative(from, source);
      if (source.includes(`${sep}node_modules${sep}`) && inside.split(sep).includes('node_modules')) return false;
      if (NEVER.test(source) || isOtherPlatformPrebuild(source)) return false;
      if (!isThirdParty) return true;
      const isDirectory = lstatSync(source).isDirectory();
      if (isDirectory) return !(ROOT_FOLDERS_NEVER.has(inside) || BUILD_INTERMEDIATES.has(basename(inside)) || (entries && isOtherBuild(inside, entries)));
      return !NEVER_THIRD_PARTY.test(source);
    },
  });
}

function copyWorkspace(dir, manifest) {
  const target = join(out, relative(root, dir));
  mkdirSync(target, { recursive: true });
  cpSync(join(dir, 'package.json'), join(target, 'package.json'));
  for (const entry of manifest.files ?? []) {
    if (existsSync(join(dir, entry))) copyFiltered(join(dir, entry), join(target, entry), false, manifest);
  }
}

const hasNoDependencies = (manifest) => ['dependencies', 'peerDependencies', 'optionalDependencies'].every((field) => Object.keys(manifest[field] ?? {}).length === 0);
/** name@version -> staged folder of the first copy of each package without dependencies. */
const leaves = new Map();

const visited = new Set();
function visit(packageDir, { isOptional = false } = {}) {
  const real = realpathSync(packageDir);
  if (visited.has(real)) return;
  visited.add(real);
  const manifest = readJson(join(real, 'package.json'));
  const isWorkspace = !real.split(sep).includes('node_modules');
  if (isOptional && !matchesPlatform(manifest)) return;
  // The symlink npm made for a workspace package (node_modules/@holdfast/x -> ../../plugins/x) is kept as a link.
  if (packageDir !== real && lstatSync(packageDir).isSymbolicLink()) {
    const link = join(out, relative(root, packageDir));
    if (!existsSync(link)) {
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(readlinkSync(packageDir), link);
    }
  }
  if (isWorkspace) copyWorkspace(real, manifest);
  else if (!copiedDirs.has(real)) {
    copiedDirs.add(real);
    const target = join(out, relative(root, real));
    const identity = `${manifest.name}@${manifest.version}`;
    const twin = hasNoDependencies(manifest) ? leaves.get(identity) : undefined;
    if (twin) {
      // npm installs a copy of the same package under each dependent that needs it nested (tslib 57 times): a
      // package with no dependencies of its own resolves nothing, so one copy serves them all through a link.
      mkdirSync(dirname(target), { recursive: true });
      symlinkSync(relative(dirname(target), twin), target);
    } else {
      copyFiltered(real, target, true, manifest);
      if (hasNoDependencies(manifest)) leaves.set(identity, target);
    }
  }
  if (FILES_ONLY.has(manifest.name)) return;
  const groups = [
    [manifest.dependencies, false],
    [manifest.peerDependencies, true],
    [manifest.optionalDependencies, true],
  ];
  for (const [deps, optional] of groups) {
    for (const name of Object.keys(deps ?? {})) {
      if (name.startsWith('@types/') || BROWSER_ONLY.has(name)) continue;
      const found = locate(name, real);
      if (found) visit(found, { isOptional: optional });
      else if (!optional && !manifest.peerDependenciesMeta?.[name]?.optional) {
        throw new Error(`${manifest.name} needs ${name}, which is not installed (run npm ci first)`);
      }
    }
  }
}

/**
 * BROWSER_ONLY packages are left out; this fails the staging when a staged file other than the browser builds known
 * to name one does, so a new release that loads one in Node cannot ship without it.
 */
const BROWSER_ONLY_USERS = [/@azure[\\/]identity[\\/]dist[\\/](commonjs|esm)[\\/]msal[\\/]browserFlows[\\/]/];
function checkBrowserOnly(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) checkBrowserOnly(path);
    else if (entry.isFile() && /\.[cm]?js$/.test(entry.name) && !BROWSER_ONLY_USERS.some((allowed) => allowed.test(path))) {
      const text = readFileSync(path, 'utf8');
      for (const name of BROWSER_ONLY) {
        if (text.includes(`"${name}"`) || text.includes(`'${name}'`)) throw new Error(`${relative(out, path)} loads ${name}, which the staging leaves out as browser-only`);
      }
    }
  }
}

mkdirSync(out, { recursive: true });
cpSync(join(root, 'package.json'), join(out, 'package.json'));
for (const entry of ENTRY_PACKAGES) visit(join(root, entry));
visit(join(root, 'node_modules', '@holdfast', 'web'));
checkBrowserOnly(out);
process.stdout.write(`staged ${visited.size} packages into ${out}\n`);
