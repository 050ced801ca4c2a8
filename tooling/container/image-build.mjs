// Builds the Holdfast image the container tests run: from a clean clone of the committed tree (never the working
// tree, which may hold other people's unfinished changes), on the base built from Debian's packages.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBaseImage } from './base-image.mjs';
import { ensurePodman } from './install.mjs';
import { podman, run } from './podman.mjs';

const repository = fileURLToPath(new URL('../..', import.meta.url));
// The machine's CA bundle, for a network whose proxy re-signs TLS (the npm registry is reached through one here).
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/** Returns { image, buildSeconds, commit }. The tag names the commit, so a second call in one run reuses it. */
export function buildImage(log = (line) => process.stdout.write(`${line}\n`)) {
  ensurePodman();
  const base = ensureBaseImage(log);
  // Re-running the tests against an image built before (a build takes 5-20 minutes on a shared 2-core machine).
  const given = process.env.HOLDFAST_TEST_IMAGE;
  if (given) {
    if (podman(['image', 'exists', given], { allowFailure: true }).status !== 0) throw new Error(`HOLDFAST_TEST_IMAGE ${given} does not exist`);
    const from = process.env.HOLDFAST_TEST_IMAGE_FROM;
    log(from ? `testing ${given}, built from ${from} by run-tests.mjs` : `testing the given image ${given} (HOLDFAST_TEST_IMAGE), not one built from HEAD`);
    return { image: given, buildSeconds: null, commit: undefined, base };
  }
  const commit = run('git', ['-C', repository, 'rev-parse', '--short=12', 'HEAD'], { env: process.env }).stdout.trim();
  const image = `localhost/holdfast:test-${commit}`;
  if (podman(['image', 'exists', image], { allowFailure: true }).status === 0) return { image, buildSeconds: null, commit, base };
  const clone = mkdtempSync(join(tmpdir(), 'holdfast-image-'));
  try {
    run('git', ['clone', '--quiet', '--no-hardlinks', repository, clone], { env: process.env });
    const started = Date.now();
    podman([
      'build', '--format', 'docker', '--network=host', '--build-arg', `BASE=${base}`,
      '--secret', `id=ca_bundle,src=${CA_BUNDLE}`, '-t', image, clone,
    ]);
    const buildSeconds = (Date.now() - started) / 1000;
    log(`image ${image} built in ${buildSeconds.toFixed(0)} s from a clean clone of ${commit}`);
    return { image, buildSeconds, commit, base };
  } finally {
    rmSync(clone, { recursive: true, force: true });
  }
}
