import { ConflictError, HttpError, NotFoundError, type JobCatalog, type PointInTimeSupport, type ResolvedAdapterConfig, type RunPlan, type SourceAdapter } from '@holdfast/kernel';
import { disposeAll, type AdapterFactory } from '../../run/adapters.js';
import { messageOf } from '../../run/outcome.js';
import { UnreachableTarget } from './unreachable-target.js';

// The server a MySQL/MariaDB point-in-time restore builds its new database on (`targetSourceId`, issue 44 scope 3):
// by default the job's own source, or another stored source configuration of the same adapter. The restore runs that
// configuration's `restoreToPoint` (the base loaded, the binary log replayed with the database rewritten) with its
// connection and account, as the point-in-time test restore does on its scratch server (mysql-scratch-server.ts).

/** The server the new database is built on, with the instance that restores there. */
export interface PointRestoreServer {
  config: ResolvedAdapterConfig;
  /** Lists the server's databases (the 409 check) and restores to a point there. */
  instance: SourceAdapter;
  restorer: PointInTimeSupport;
  /** True when it is the job's own source configuration. */
  isJobSource: boolean;
  /** How logs and records name it: the configuration's name, with host:port when the source can tell. */
  label: string;
}

/**
 * The other server's configuration switched into the source's point-in-time mode, for `restoreToPoint` only: the
 * restore needs the account's connection and the replay tools on the Holdfast host, not binary logging on that
 * server, and the MySQL source offers `restoreToPoint` only in that mode. Nothing streams (only a supervised job
 * does); the configuration id is marked so nothing mistakes the instance for the stored configuration. A
 * configuration that cannot be in that mode (the MySQL source over SSH: its tools would run on the SSH host) fails
 * to build, which is the refusal.
 */
function restoringConfig(server: ResolvedAdapterConfig): ResolvedAdapterConfig {
  return { ...server, configId: `${server.configId}#point-restore`, config: { ...server.config, mode: 'point-in-time' } };
}

/** The stored configuration `targetSourceId` names: 404 for an unknown id or one that is not a source. */
async function targetConfigOf(catalog: JobCatalog, targetSourceId: string): Promise<ResolvedAdapterConfig> {
  const missing = () => new NotFoundError(`targetSourceId "${targetSourceId}" is not a stored source configuration`);
  let config: ResolvedAdapterConfig;
  try {
    config = await catalog.resolveAdapterConfig(targetSourceId);
  } catch (error) {
    if (error instanceof NotFoundError || (error as HttpError)?.status === 404) throw missing();
    throw error;
  }
  if (config.kind !== 'source') throw missing();
  return config;
}

/**
 * Resolves the server of a restore of the job of `plan` and checks it can take one, before anything is read: a
 * stored source (404), not excluded from restores (409), of the job source's adapter (422: the base is a dump of
 * that engine, replayed by its tools), in a configuration that can restore to a point (422: not over SSH). The
 * caller disposes `instance` (the job's own instance is built here too when `targetSourceId` is absent).
 */
export async function pointRestoreServer(catalog: JobCatalog, adapters: AdapterFactory, plan: RunPlan, targetSourceId: string | undefined): Promise<PointRestoreServer> {
  if (targetSourceId === undefined || targetSourceId === plan.source.configId) {
    const instance = adapters.source(plan.source);
    const restorer = instance.pointInTime?.() ?? null;
    if (!restorer) {
      await disposeAll([instance]);
      throw new ConflictError(`source ${plan.source.name} is not set up for point-in-time recovery`);
    }
    return { config: plan.source, instance, restorer, isJobSource: true, label: labelOf(plan.source, instance) };
  }
  const config = await targetConfigOf(catalog, targetSourceId);
  if (config.excludeFromRestore) throw new ConflictError(`targetSourceId: source "${config.name}" is excluded from restores; choose another server or leave targetSourceId out for the job's own`);
  if (config.adapterId !== plan.source.adapterId) {
    throw new UnreachableTarget(
      `targetSourceId: source "${config.name}" is a ${config.adapterId} source; the job's base backup is a ${plan.source.adapterId} dump loaded and replayed with that engine's tools, so targetSourceId must name a ${plan.source.adapterId} source (or be left out for the job's own server)`,
    );
  }
  let instance: SourceAdapter;
  try {
    instance = adapters.source(restoringConfig(config));
  } catch (error) {
    throw new UnreachableTarget(`targetSourceId: source "${config.name}" cannot take a point-in-time restore: ${messageOf(error)}`);
  }
  const restorer = instance.pointInTime?.() ?? null;
  if (!restorer) {
    await disposeAll([instance]);
    throw new UnreachableTarget(`targetSourceId: source "${config.name}" cannot take a point-in-time restore (its adapter offers no restore to an instant)`);
  }
  return { config, instance, restorer, isJobSource: false, label: labelOf(config, instance) };
}

/** `MariaDB scratch (127.0.0.1:3310)`: the name, and the server the source's scratch operations name, when any. */
function labelOf(config: ResolvedAdapterConfig, instance: SourceAdapter): string {
  try {
    const scratch = instance.scratch?.();
    if (scratch?.placement === 'database') return `${config.name} (${scratch.server})`;
  } catch {
    // A source that has no scratch operations in this configuration is named by its name alone.
  }
  return config.name;
}

/** 403 text when the caller's grants do not cover writing to the server `targetSourceId` names. */
export function targetSourceForbidden(targetSourceId: string): HttpError {
  return new HttpError(403, `targetSourceId "${targetSourceId}": restoring onto another server needs storage:restore on that source`);
}
