import type { BackupFigures } from '../run/sidecar.js';
import type { TestRestoreMetadata } from '../store/metadata.js';
import type { FileFigures } from './archive-figures.js';

/** Keys of one database of a key-value store: all of them, and those with an expiry. */
export interface KeyFigures {
  keys: number;
  expires: number;
}

/** One check of a test restore, as logged and kept in `metadata.testRestore.checks`. */
export type Check = TestRestoreMetadata['checks'][number];

/** Whether `actual` is within `tolerance` percent of `expected`. */
const within = (actual: number, expected: number, tolerance: number): boolean => Math.abs(actual - expected) <= (expected * tolerance) / 100;

/** Directory archives: the restored files and bytes against the ones counted in the archive while it was written. */
export function fileChecks(actual: FileFigures, expected: FileFigures | undefined): Check[] {
  if (!expected) return [{ name: 'files present', ok: actual.count > 0, detail: `${actual.count} files, ${actual.bytes} bytes restored; no figures were recorded at backup time` }];
  return [
    { name: 'file count', ok: actual.count === expected.count, detail: `${actual.count} restored, ${expected.count} recorded at backup time` },
    { name: 'total size', ok: actual.bytes === expected.bytes, detail: `${actual.bytes} bytes restored, ${expected.bytes} recorded at backup time` },
  ];
}

/**
 * Databases with tables (PostgreSQL, MySQL/MariaDB, SQLite): every table recorded at backup time is present and has
 * its row count (within `tolerance` percent). `scratch` maps each original database to where it was restored.
 */
export async function tableChecks(
  scratch: ReadonlyMap<string, string>,
  count: (restored: string) => Promise<Record<string, number>>,
  figures: BackupFigures | undefined,
  tolerance: number,
): Promise<Check[]> {
  const checks: Check[] = [];
  for (const [original, restored] of scratch) {
    const actual = await count(restored);
    const expected = figures?.databases?.[original];
    if (!expected) {
      checks.push({ name: `${original}: tables present`, ok: Object.keys(actual).length > 0, detail: `${Object.keys(actual).length} tables restored; no figures were recorded at backup time` });
      continue;
    }
    const missing = Object.keys(expected).filter((table) => !(table in actual));
    checks.push({ name: `${original}: tables present`, ok: missing.length === 0, detail: missing.length ? `missing: ${missing.join(', ')}` : `${Object.keys(expected).length} tables` });
    const off = Object.entries(expected)
      .filter(([table]) => table in actual)
      .filter(([table, rows]) => !within(actual[table]!, rows, tolerance))
      .map(([table, rows]) => `${table} ${actual[table]} vs ${rows}`);
    const total = Object.values(expected).reduce((sum, rows) => sum + rows, 0);
    checks.push({ name: `${original}: row counts`, ok: off.length === 0, detail: off.length ? `differ: ${off.join(', ')}` : `${total} rows in ${Object.keys(expected).length} tables match` });
  }
  return checks;
}

/**
 * Key-value stores (Redis): keys are present, every key without an expiry came back (within `tolerance` percent), and no more keys with
 * an expiry than were recorded (those that expired since the backup are rightly not restored). `restored` excludes
 * the scratch marker key.
 */
export function keyChecks(original: string, restored: KeyFigures, expected: KeyFigures | undefined, tolerance: number): Check[] {
  if (!expected) return [{ name: `database ${original}: keys present`, ok: restored.keys > 0, detail: `${restored.keys} keys restored; no figures were recorded at backup time` }];
  const persistent = { restored: restored.keys - restored.expires, expected: expected.keys - expected.expires };
  return [
    { name: `database ${original}: keys present`, ok: restored.keys > 0 || expected.keys === 0, detail: `${restored.keys} keys restored, ${expected.keys} recorded at backup time` },
    {
      name: `database ${original}: key counts`,
      ok: within(persistent.restored, persistent.expected, tolerance) && restored.expires <= expected.expires + (expected.expires * tolerance) / 100,
      detail: `${persistent.restored} keys without expiry restored, ${persistent.expected} recorded; ${restored.expires} keys with an expiry restored, at most ${expected.expires} recorded (expired ones are not restored)`,
    },
  ];
}
