import type { ResolvedAdapterConfig, RunPlan } from '@holdfast/kernel';
import { messageOf } from '../run/outcome.js';
import type { RunContext } from '../run/run-context.js';
import type { BackupFigures } from '../run/sidecar.js';
import type { TarFigures } from './archive-figures.js';
import { keyFigures } from './redis-scratch.js';
import { scratchDriverFor } from './scratch-driver.js';
import { sqliteTableRowCounts } from './sqlite-scratch.js';

/** Reads the figures of one backed-up database: table -> rows, or for Redis `{ keys, expires }`. */
type FigureReader = (config: ResolvedAdapterConfig, database: string) => Promise<Record<string, number>>;

/**
 * How figures are read from a job's source, or null when they cannot be: PostgreSQL and MySQL/MariaDB (row counts
 * over a direct connection), SQLite (row counts through the sqlite3 CLI, read-only), Redis in logical mode (key
 * counts from `INFO keyspace`). Sources reached over SSH have no direct connection from the engine.
 */
function figureReaderFor(config: ResolvedAdapterConfig): FigureReader | null {
  const driver = scratchDriverFor(config);
  if (driver) return (source, database) => driver.tableRowCounts(source, database);
  if (config.config.ssh) return null;
  if (config.adapterId === 'sqlite') return (source, file) => sqliteTableRowCounts(source, file);
  if (config.adapterId === 'redis' && config.config.mode !== 'rdb') return async (source, index) => ({ ...(await keyFigures(source, Number(index))) });
  return null;
}

/**
 * Figures a later test restore compares with, recorded only for jobs that have a test restore target (counting rows
 * costs a scan per table). Databases: exact row counts per table (Redis: keys and keys with an expiry), read right
 * after the dump (a busy database may drift; `rowCountTolerancePercent` allows for it). Directory archives: files
 * and bytes counted in the archive itself. Failing to record figures never fails the backup: the test restore then
 * checks presence only.
 */
export async function recordFigures(ctx: RunContext, plan: RunPlan, databases: string[], archive: Pick<TarFigures, 'done'> | undefined): Promise<BackupFigures | undefined> {
  if (!plan.job.testRestore) return undefined;
  const figures: BackupFigures = {};
  if (archive) {
    const files = await archive.done;
    if (files) figures.files = files;
    else ctx.log.warn('test restore figures: the archive could not be parsed; the next test restore checks presence only');
  }
  const read = figureReaderFor(plan.source);
  if (read && databases.length > 0) {
    try {
      figures.databases = {};
      for (const database of databases) figures.databases[database] = await read(plan.source, database);
    } catch (error) {
      delete figures.databases;
      ctx.log.warn(`test restore figures: counts could not be read (${messageOf(error)}); the next test restore checks presence only`);
    }
  }
  return Object.keys(figures).length > 0 ? figures : undefined;
}
