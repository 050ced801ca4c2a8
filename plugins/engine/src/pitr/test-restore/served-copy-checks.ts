import type { ChangeLogKind, ResolvedAdapterConfig } from '@holdfast/kernel';
import type { AdapterFactory } from '../../run/adapters.js';
import { disposeAll } from '../../run/adapters.js';
import { messageOf } from '../../run/outcome.js';
import type { Check } from '../../test-restore/scratch-checks.js';

/** Commit times are read to the microsecond and kept to the millisecond: a rounding may add up to 1 ms. */
const ROUNDING_MS = 1;

/**
 * The job's source configuration pointed at the restored copy served on 127.0.0.1:`port`, so the source's own client
 * asks it questions (the engine has no database driver of its own). The copy keeps the source's roles and passwords;
 * the restore serves it without TLS.
 */
export function servedCopyConfig(logKind: ChangeLogKind, source: ResolvedAdapterConfig, port: number): ResolvedAdapterConfig {
  if (logKind !== 'postgres-wal') throw new Error(`point-in-time test restores of ${logKind} sources are not supported yet`);
  return { ...source, configId: `${source.configId}#test-restore`, config: { ...source.config, host: '127.0.0.1', port, sslMode: 'disable' } };
}

/**
 * Checks of the restored copy while it is served: it answers a query (its version, through the source's client) and
 * lists at least one database (with sizes when the source reports them). A login or query that fails is a failed
 * check with the reason, never a thrown error: the run goes on to clean up and reports every check.
 */
export async function servedCopyChecks(adapters: AdapterFactory, config: ResolvedAdapterConfig): Promise<Check[]> {
  const probe = adapters.source(config);
  const checks: Check[] = [];
  try {
    try {
      const version = await probe.detectVersion();
      checks.push({ name: 'server answers', ok: true, detail: `${version.version}${version.edition ? ` (${version.edition})` : ''} on 127.0.0.1:${String(config.config.port)}` });
    } catch (error) {
      checks.push({ name: 'server answers', ok: false, detail: `the restored server did not answer on 127.0.0.1:${String(config.config.port)}: ${messageOf(error)}` });
      return checks;
    }
    try {
      const sizes = probe.databaseSizes ? await probe.databaseSizes() : (await probe.listDatabases()).map((name) => ({ name, sizeBytes: 0 }));
      const bytes = sizes.reduce((sum, database) => sum + database.sizeBytes, 0);
      checks.push({ name: 'databases present', ok: sizes.length > 0, detail: sizes.length > 0 ? `${sizes.length} databases (${sizes.map((database) => database.name).join(', ')}), ${bytes} bytes` : 'the restored cluster lists no database' });
    } catch (error) {
      checks.push({ name: 'databases present', ok: false, detail: `listing the restored databases failed: ${messageOf(error)}` });
    }
    return checks;
  } finally {
    await disposeAll([probe]);
  }
}

/**
 * The recovered point against the target: replay stops before the first commit after the target, so the newest
 * commit the copy holds is at or before it. A copy past its target would restore data the user did not ask for.
 */
export function recoveryPointCheck(target: Date, recoveredTo: Date | null): Check {
  if (!recoveredTo) return { name: 'recovery point', ok: true, detail: 'no transaction was replayed after the base backup: the copy is as of the end of the base backup' };
  const differenceMs = target.getTime() - recoveredTo.getTime();
  return {
    name: 'recovery point',
    ok: differenceMs >= -ROUNDING_MS,
    detail:
      differenceMs >= -ROUNDING_MS
        ? `the newest replayed commit (${recoveredTo.toISOString()}) is ${(Math.max(0, differenceMs) / 1000).toFixed(3)} s before the target ${target.toISOString()}`
        : `the newest replayed commit (${recoveredTo.toISOString()}) is AFTER the target ${target.toISOString()}`,
  };
}
