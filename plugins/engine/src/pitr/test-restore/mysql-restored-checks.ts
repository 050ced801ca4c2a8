import type { ScratchDatabaseServer } from '@holdfast/kernel';
import { messageOf } from '../../run/outcome.js';
import type { BackupFigures } from '../../run/sidecar.js';
import type { Check } from '../../test-restore/scratch-checks.js';

/** What the checks of one rebuilt database found: the checks, and the row counts they read. */
export interface RestoredDatabase {
  checks: Check[];
  tables: Record<string, number>;
}

const listTables = (tables: Record<string, number>): string =>
  Object.entries(tables)
    .map(([table, rows]) => `${table} ${rows}`)
    .join(', ');

/**
 * Checks of one database of the base rebuilt at the target in `into`, before it is dropped: it exists, it has every
 * table the base recorded (its figures, counted right after the base's dump), and its row counts are reported. The
 * counts are not compared with the base's: the log replayed after the base changes them, and what they should be
 * at a random instant is known to nobody but the database. A table dropped between the base and the target also
 * shows as missing (the replay does not say which tables it dropped); the detail says so. A query that fails is a
 * failed check with the reason, never a thrown error, so the run goes on to drop the scratch.
 */
export async function restoredDatabaseChecks(scratch: ScratchDatabaseServer, original: string, into: string, figures: BackupFigures | undefined): Promise<RestoredDatabase> {
  try {
    if (!(await scratch.databaseExists(into))) {
      return { checks: [{ name: `${original}: restored database`, ok: false, detail: `"${into}" is not on the server after the restore` }], tables: {} };
    }
    const tables = await scratch.figures(into);
    const checks: Check[] = [{ name: `${original}: restored database`, ok: true, detail: `"${into}" on ${scratch.server}` }];
    const expected = figures?.databases?.[original];
    const count = Object.keys(tables).length;
    if (!expected) {
      checks.push({ name: `${original}: tables present`, ok: count > 0, detail: `${count} tables restored; the base backup recorded no figures to compare with` });
    } else {
      const missing = Object.keys(expected).filter((table) => !(table in tables));
      checks.push({
        name: `${original}: tables present`,
        ok: missing.length === 0,
        detail: missing.length
          ? `missing: ${missing.join(', ')} (tables of the base backup; a table dropped between the base backup and the target is missing too)`
          : `the ${Object.keys(expected).length} tables of the base backup${count > Object.keys(expected).length ? ` and ${count - Object.keys(expected).length} created after it` : ''}`,
      });
    }
    const rows = Object.values(tables).reduce((sum, value) => sum + value, 0);
    checks.push({ name: `${original}: row counts`, ok: true, detail: `${rows} rows at the target${count > 0 ? ` (${listTables(tables)})` : ''}${expected ? `; the base backup had ${listTables(expected) || 'no tables'}` : ''}` });
    return { checks, tables };
  } catch (error) {
    return { checks: [{ name: `${original}: restored database`, ok: false, detail: `reading "${into}" failed: ${messageOf(error)}` }], tables: {} };
  }
}
