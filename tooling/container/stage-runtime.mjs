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
import { cpSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, symlinkSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
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
const NEVER_THIRD_PARTY = /(\.[cm]?ts|\.md|\.markdown)$/i;

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));
const isLibcMusl = false; // the image is Debian (glibc)

// Prebuilt binaries for every platform (prebuildify's prebuilds/<platform>-<arch>/): only this one is kept.
const PREBUILDS = `${sep}prebuilds${sep}`;
const THIS_PLATFORM = `${process.platform}-${process.arch}`;
const isOtherPlatformPrebuild = (path) => {
  const at = path.lastIndexOf(PREBUILDS);
  if (at < 0) return false;
  const folder = path.slice(at + PREBUILDS.length).split(sep)[0];
  return folder !== '' && folder !== THIS_PLATFORM;
};

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

const copiedDirs = new Set();
function copyFiltered(from, to, isThirdParty) {
  cpSync(from, to, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => {
      if (source.includes(`${sep}node_modules${sep}`) && relative(from, source).split(sep).includes('node_modules')) return false;
      if (NEVER.test(source) || isOtherPlatformPrebuild(source)) return false;
      return !(isThirdParty && NEVER_THIRD_PARTY.test(source) && lstatSync(source).isFile());
    },
  });
}

function copyWorkspace(dir, manifest) {
  const target = join(out, relative(root, dir));
  mkdirSync(target, { recursive: true });
  cpSync(join(dir, 'package.json'), join(target, 'package.json'));
  for (const entry of manifest.files ?? []) {
    if (existsSync(join(dir, entry))) copyFiltered(join(dir, entry), join(target, entry), false);
  }
}

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
    copyFiltered(real, join(out, relative(root, real)), true);
  }
  if (FILES_ONLY.has(manifest.name)) return;
  const groups = [
    [manifest.dependencies, false],
    [manifest.peerDependencies, true],
    [manifest.optionalDependencies, true],
  ];
  for (const [deps, optional] of groups) {
    for (const name of Object.keys(deps ?? {})) {
      if (name.startsWith('@types/')) continue;
      const found = locate(name, real);
      if (found) visit(found, { isOptional: optional });
      else if (!optional && !manifest.peerDependenciesMeta?.[name]?.optional) {
        throw new Error(`${manifest.name} needs ${name}, which is not installed (run npm ci first)`);
      }
    }
  }
}

mkdirSync(out, { recursive: true });
cpSync(join(root, 'package.json'), join(out, 'package.json'));
for (const entry of ENTRY_PACKAGES) visit(join(root, entry));
visit(join(root, 'node_modules', '@holdfast', 'web'));
process.stdout.write(`staged ${visited.size} packages into ${out}\n`);
