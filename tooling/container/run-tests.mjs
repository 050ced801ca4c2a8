// `npm run test:container`: builds the image once (from a clean clone of HEAD, on the cached Debian base), then runs
// every tooling/container/*.test.mjs against that one image. Each test file runs in its own process and would
// otherwise look at HEAD again: on a shared working tree a commit landing between the two files cost a second
// 5-minute build. Arguments are passed to `node --test` (e.g. --test-name-pattern compose).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildImage } from './image-build.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const started = Date.now();
const built = buildImage();
console.log(`# image ${built.image}${built.buildSeconds === null ? ' (already built)' : `: built in ${built.buildSeconds.toFixed(0)} s`}`);
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...process.argv.slice(2), `${here}image.test.mjs`, `${here}compose.test.mjs`], {
  stdio: 'inherit',
  env: { ...process.env, HOLDFAST_TEST_IMAGE: built.image, HOLDFAST_TEST_IMAGE_FROM: built.commit ?? 'the given image' },
});
console.log(`# test:container wall time: ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exit(result.status ?? 1);
