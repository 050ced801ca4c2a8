// SQLite has no server: the source-sqlite tests need only the `sqlite3` CLI (it runs the online backup API and the
// integrity checks). Installs it when missing. Idempotent. Usable as `ensureSqlite()` from ensure.mjs, as a vitest
// globalSetup, or `node sqlite.mjs`.
import { spawnSync } from 'node:child_process';
import { aptInstall } from './mariadb.mjs';

/** Makes sure `sqlite3` runs; resolves its version line. */
export async function ensureSqlite() {
  const probe = () => spawnSync('sqlite3', ['--version'], { encoding: 'utf8' });
  let found = probe();
  if (found.status !== 0) {
    aptInstall(['sqlite3']);
    found = probe();
  }
  if (found.status !== 0) throw new Error('the sqlite3 CLI does not run after installing the apt package sqlite3');
  return found.stdout.trim().split(' ')[0];
}

/** vitest globalSetup entry. */
export default async function setup() {
  await ensureSqlite();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureSqlite().then(
    (version) => process.stdout.write(`sqlite3 ${version} ready\n`),
    (error) => {
      process.stderr.write(`sqlite: ${error.message}\n`);
      process.exit(1);
    },
  );
}
