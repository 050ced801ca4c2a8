// Debian's `pigz` (parallel gzip): the benchmark of issue 42 compares Holdfast's GZIP backup with
// `pg_dump -Fc -Z0 | pigz -3`, the fastest gzip pipeline an operator would write (tooling/bench/table.mjs skips that
// row, saying so, when the binary is missing). Installed idempotently under the shared apt flock.
import { existsSync } from 'node:fs';
import { aptInstall } from './mariadb.mjs';

export const PIGZ_PATH = '/usr/bin/pigz';

/** Installs the `pigz` apt package when missing; returns a state line for ensure.mjs. */
export function ensurePigz() {
  if (existsSync(PIGZ_PATH)) return 'already installed';
  aptInstall(['pigz']);
  if (!existsSync(PIGZ_PATH)) throw new Error('cannot install pigz (apt): the package installed but /usr/bin/pigz is missing');
  return 'installed';
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(`pigz: ${ensurePigz()}\n`);
