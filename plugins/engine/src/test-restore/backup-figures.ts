import { isAdapterError, type RunPlan, type SourceAdapter } from '@holdfast/kernel';
import type { AdapterFactory } from '../run/adapters.js';
import { messageOf } from '../run/outcome.js';
import type { RunContext } from '../run/run-context.js';
import type { BackupFigures } from '../run/sidecar.js';
import type { TarFigures } from './archive-figures.js';

/** Reads the figures of one backed-up database: table -> rows, or for key-value stores `{ keys, expires }`. */
type FigureReader = (database: string) => Promise<Record<string, number>>;

/**
 * How figures are read from a job's source, or null when they cannot be: only sources with scratch databases
 * (`capabilities.scratchRestore`) count them, and only configurations that can take part in test restores (a source
 * reached over SSH has no direct connection from Holdfast; Redis in rdb mode cannot be test-restored).
 */
function figureReaderFor(adapters: AdapterFactory, plan: RunPlan, source: SourceAdapter): FigureReader | null {
  if (!adapters.scratchPlacement(plan.source.adapterId) || !source.scratch) return null;
  try {
    const scratch = source.scratch();
    return (database) => scratch.figures(database);
  } catch (error) {
    if (isAdapterError(error) && error.code === 'UNSUPPORTED') return null;
    throw error;
  }
}

/**
 * Figures a later test restore compares with, recorded only for jobs that have a test restore target (counting rows
 * costs a scan per table). Databases: exact row counts per table (Redis: keys and keys with an expiry), read right
 * after the dump (a busy database may drift; `rowCountTolerancePercent` allows for it). Directory archives: files
 * and bytes counted in the archive itself. Failing to record figures never fails the backup: the test restore then
 * checks presence only.
 */
export async function recordFigures(
  ctx: RunContext,
  adapters: AdapterFactory,
  source: { plan: RunPlan; instance: SourceAdapter; databases: string[] },
  archive: Pick<TarFigures, 'done'> | undefined,
): Promise<BackupFigures | undefined> {
  const { plan, databases } = source;
  if (!plan.job.testRestore) return undefined;
  const figures: BackupFigures = {};
  if (archive) {
    const files = await archive.done;
    if (files) figures.files = files;
    else ctx.log.warn('test restore figures: the archive could not be parsed; the next test restore checks presence only');
  }
  if (databases.length > 0) {
    try {
      const read = figureReaderFor(adapters, plan, source.instance);
      if (!read) return Object.keys(figures).length > 0 ? figures : undefined;
      figures.databases = {};
      for (const database of databases) figures.databases[database] = await read(database);
    } catch (error) {
      delete figures.databases;
      ctx.log.warn(`test restore figures: counts could not be read (${messageOf(error)}); the next test restore checks presence only`);
    }
  }
  return Object.keys(figures).length > 0 ? figures : undefined;
}
