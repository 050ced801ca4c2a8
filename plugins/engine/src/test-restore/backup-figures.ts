import type { RunPlan } from '@holdfast/kernel';
import { messageOf } from '../run/outcome.js';
import type { RunContext } from '../run/run-context.js';
import type { BackupFigures } from '../run/sidecar.js';
import type { TarFigures } from './archive-figures.js';
import { scratchDriverFor } from './scratch-driver.js';

/**
 * Figures a later test restore compares with, recorded only for jobs that have a test restore target (counting rows
 * costs a scan per table). PostgreSQL: exact row counts per table, read right after the dump (a busy database may
 * drift; `rowCountTolerancePercent` allows for it). Directory archives: files and bytes counted in the archive itself.
 * Failing to record figures never fails the backup: the test restore then checks presence only.
 */
export async function recordFigures(ctx: RunContext, plan: RunPlan, databases: string[], archive: TarFigures | undefined): Promise<BackupFigures | undefined> {
  if (!plan.job.testRestore) return undefined;
  const figures: BackupFigures = {};
  if (archive) {
    const files = await archive.done;
    if (files) figures.files = files;
    else ctx.log.warn('test restore figures: the archive could not be parsed; the next test restore checks presence only');
  }
  const driver = scratchDriverFor(plan.source);
  if (driver && databases.length > 0) {
    try {
      figures.databases = {};
      for (const database of databases) figures.databases[database] = await driver.tableRowCounts(plan.source, database);
    } catch (error) {
      delete figures.databases;
      ctx.log.warn(`test restore figures: row counts could not be read (${messageOf(error)}); the next test restore checks presence only`);
    }
  }
  return Object.keys(figures).length > 0 ? figures : undefined;
}
