#!/usr/bin/env node
// The `holdfast` executable. It is committed (dist/ is not), so `npm ci` on a fresh clone can link it into
// node_modules/.bin: npm skips a bin whose target does not exist yet, which made `npx holdfast` fail with
// "could not determine executable to run".
import { access } from 'node:fs/promises';

const main = new URL('../dist/main.js', import.meta.url);
try {
  await access(main);
} catch {
  process.stderr.write('holdfast: the CLI is not built yet; run `npm run build` in the repository first\n');
  process.exit(10);
}
await import(main.href);
