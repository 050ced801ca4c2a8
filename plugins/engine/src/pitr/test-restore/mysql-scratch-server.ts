import type { PointInTimeSupport, ResolvedAdapterConfig, RunPlan, ScratchDatabaseServer, SourceAdapter, TestRestoreConfig } from '@holdfast/kernel';
import { disposeAll } from '../../run/adapters.js';
import type { RunServices } from '../../run/services.js';
import { resolveScratchSource } from '../../test-restore/source-scratch.js';

// Where a MySQL/MariaDB point-in-time test restore builds its throwaway databases: the server of the `database`
// target's `sourceId`, by default the job's own source. The restore runs through the job source's adapter kind
// (`restoreToPoint`: the base loaded, the binary log replayed with the database rewritten), with the scratch server's
// connection and account.

/** The scratch server of a MySQL/MariaDB point-in-time test restore. */
export interface MysqlScratchServer {
  config: ResolvedAdapterConfig;
  /** Lists, counts and drops the throwaway databases on it. */
  scratch: ScratchDatabaseServer;
  /** Restores one database of a base to an instant as a new database on this server. */
  restorer: PointInTimeSupport;
  /** True when it is the job's own source configuration (production is written, then dropped). */
  isJobSource: boolean;
  /** Instances built for it, disposed by the caller at the end. */
  instances: SourceAdapter[];
}

/**
 * The scratch server's configuration in the source's point-in-time mode, for its `restoreToPoint` only: the restore
 * needs the account's connection and the replay tools, not binary logging on that server, and the MySQL source
 * offers `restoreToPoint` only in point-in-time mode. No stream starts (only a supervised job streams), and the
 * configuration id is marked so nothing mistakes the instance for the stored configuration.
 */
function restoringConfig(server: ResolvedAdapterConfig): ResolvedAdapterConfig {
  return { ...server, configId: `${server.configId}#point-test-restore`, config: { ...server.config, mode: 'point-in-time' } };
}

/**
 * Resolves the scratch server of `config` (a `database` target) for the job of `plan` and checks it can take the
 * restore before anything is read: it has throwaway databases (a direct connection, not SSH), is not excluded from
 * restores, and is a source of the job source's adapter (the base is a dump of that engine, replayed by its tools).
 */
export async function mysqlScratchServer(services: RunServices, plan: RunPlan, config: TestRestoreConfig): Promise<MysqlScratchServer> {
  const resolved = await resolveScratchSource(services, plan.source, config);
  const instances: SourceAdapter[] = [resolved.source, ...resolved.helpers];
  try {
    const server = resolved.config;
    if (resolved.scratch?.placement !== 'database') throw new Error(`the scratch server "${server.name}" has no throwaway databases`);
    if (server.adapterId !== plan.source.adapterId) {
      throw new Error(
        `the scratch server "${server.name}" is a ${server.adapterId} source; a point-in-time test restore of a ${plan.source.adapterId} job loads its base backup and replays its binary log with that engine's tools, so testRestore.target.sourceId must name a ${plan.source.adapterId} source (or be left out for the job's own server)`,
      );
    }
    const isJobSource = server.configId === plan.source.configId;
    const instance = isJobSource ? resolved.source : services.adapters.source(restoringConfig(server));
    if (instance !== resolved.source) instances.push(instance);
    const restorer = instance.pointInTime?.() ?? null;
    if (!restorer) throw new Error(`source "${server.name}" cannot restore to an instant (its adapter offers no point-in-time restore)`);
    return { config: server, scratch: resolved.scratch, restorer, isJobSource, instances };
  } catch (error) {
    await disposeAll(instances);
    throw error;
  }
}
