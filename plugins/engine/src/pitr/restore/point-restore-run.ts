import type { Readable } from 'node:stream';
import type { SourceAdapter } from '@holdfast/kernel';
import { disposeAll, type StorageInstance } from '../../run/adapters.js';
import { cancellationOf, messageOf, type RunOutcome } from '../../run/outcome.js';
import type { RunContext } from '../../run/run-context.js';
import type { RunServices } from '../../run/services.js';
import { baseBackupInfoOf } from '../base-backup-record.js';
import { ChangeLogStore } from '../change-log-store.js';
import { recoveryTargetOf, type PointRestoreRequest } from './point-restore-request.js';
import { pointRestoreServer } from './point-restore-server.js';
import { openStoredBase, segmentFetcher, type StoredLogDeps } from './stored-log-reader.js';

/**
 * Runs a point-in-time restore (docs/pitr.md, "Restoring through Holdfast (API)"): the base backup the route chose
 * is streamed from a destination that holds it, the log is fetched piece by piece from the destinations, and the
 * source's `restoreToPoint` builds the copy: PostgreSQL replays and promotes a data directory at `targetPath`
 * (left as it was on failure); MySQL/MariaDB loads one database of the base into a new database on the source's
 * server, or on the server of `targetSource` (another configuration of the same adapter), and replays the binary log
 * into it (`database`).
 */
export async function runPointRestore(ctx: RunContext, services: RunServices): Promise<RunOutcome> {
  const request = JSON.parse(ctx.execution.request ?? '{}') as PointRestoreRequest;
  const store = new ChangeLogStore(ctx.store.database);
  let source: SourceAdapter | undefined;
  let storages: StorageInstance[] = [];
  let path: string | null = null;
  let baseStream: Readable | undefined;
  try {
    await ctx.enter('01-initialize', 0);
    const plan = await services.catalog.resolveRunPlan(request.jobId);
    const base = (await store.basesOf(plan.job.id)).find((candidate) => candidate.executionId === request.baseExecutionId);
    if (!base) throw new Error(`the base backup of execution ${request.baseExecutionId} is no longer held by any destination; start the restore again`);
    path = base.storageKey;
    let support;
    if (request.database) {
      // The server the route checked; resolved again, since its configuration may have changed since.
      const server = await pointRestoreServer(services.catalog, services.adapters, plan, request.targetSource?.id);
      source = server.instance;
      support = server.restorer;
    } else {
      source = services.adapters.source(plan.source);
      support = source.pointInTime?.() ?? null;
    }
    if (!support) throw new Error(`source ${plan.source.name} is not set up for point-in-time recovery any more`);
    const destinations = plan.destinations.filter((destination) => !request.destinationId || destination.configId === request.destinationId);
    storages = destinations.map((destination) => services.adapters.storage(destination));
    const deps: StoredLogDeps = {
      storages,
      store,
      jobId: plan.job.id,
      encryptionKey: (profileId) => services.catalog.encryptionKey(profileId),
      logKey: plan.encryption?.key ?? null,
      signal: ctx.signal,
      warn: (message) => ctx.log.warn(message),
    };
    ctx.log.info(`point-in-time restore of job "${plan.job.name}" to ${describeTarget(request)} ${describeInto(request)}, from base backup ${base.storageKey} (consistent at ${base.consistentAt.toISOString()}, timeline ${base.timeline})`);
    await ctx.enter('02-download', 5);
    const opened = await openStoredBase(deps, base);
    baseStream = opened.stream;
    ctx.log.info(`reading the base backup from ${opened.from.name}`);
    let fetched = 0;
    const fetchSegment = segmentFetcher(deps, base.timeline, (piece, from) => {
      fetched++;
      ctx.progress(Math.min(80, 10 + fetched), {}, false);
      ctx.log.debug(`log piece ${piece.storageKey} read from ${from.name}`);
    });
    await ctx.enter('03-restore', 10);
    const result = await support.restoreToPoint({
      base: baseBackupInfoOf(base),
      baseStream: opened.stream,
      fetchSegment,
      target: recoveryTargetOf(request.target),
      ...(request.targetPath !== undefined ? { targetPath: request.targetPath } : {}),
      ...(request.database ? { database: request.database } : {}),
      ...(request.servePort !== undefined ? { servePort: request.servePort } : {}),
      signal: ctx.signal,
      onProgress: (message) => {
        ctx.log.info(message);
        ctx.progress(ctx.metadata.progress ?? 10);
      },
    });
    await ctx.enter('04-completion', 95);
    for (const warning of result.warnings) ctx.log.warn(`restore: ${warning}`);
    const recoveredTo = result.recoveredTo?.toISOString() ?? null;
    ctx.metadata.pointRestore = {
      jobId: plan.job.id,
      target: request.target,
      ...(request.targetPath !== undefined ? { targetPath: request.targetPath } : {}),
      ...(request.database ? { database: request.database } : {}),
      ...(request.targetSource ? { targetSource: request.targetSource } : {}),
      baseExecutionId: base.executionId,
      recoveredTo,
      ...(result.served ? { served: result.served } : {}),
    };
    ctx.log.info(`point-in-time restore finished: ${recoveredTo ? `recovered to ${recoveredTo} (${request.database ? 'the start of the last transaction replayed' : 'the last commit replayed'})` : 'no transaction was replayed after the base backup'}; ${describeResult(request, result.served)}`);
    ctx.progress(100, {}, true);
    return { status: 'Success', path };
  } catch (error) {
    const cancelled = cancellationOf(ctx.signal);
    if (cancelled) ctx.log.warn(`cancelled: ${cancelled.message}`);
    else ctx.log.error(`point-in-time restore failed: ${messageOf(error)}`);
    return { status: cancelled ? 'Cancelled' : 'Failed', path };
  } finally {
    // A restore that refused before reading the whole base (or read it all) leaves no download running.
    baseStream?.destroy();
    await disposeAll([source, ...storages.map((storage) => storage.adapter)]);
  }
}

/** Where the copy is built, for the log. */
function describeInto(request: PointRestoreRequest): string {
  if (request.database) return `from database "${request.database.name}" into the new database "${request.database.into}" on ${serverOf(request)}`;
  return `into ${request.targetPath}`;
}

/** The server the new database is built on, for the log. */
function serverOf(request: PointRestoreRequest): string {
  return request.targetSource ? `the server of source "${request.targetSource.name}" (targetSourceId ${request.targetSource.id})` : "the source's server";
}

/** What the finished restore left, for the log. */
function describeResult(request: PointRestoreRequest, served: { port: number } | undefined): string {
  if (request.database) return `database "${request.database.name}" as of the target is in the new database "${request.database.into}" on ${serverOf(request)}`;
  if (served) return `the restored server runs on 127.0.0.1:${served.port}`;
  return `${request.targetPath} holds a promoted data directory, stopped`;
}

function describeTarget(request: PointRestoreRequest): string {
  const target = request.target;
  if (target.type === 'time') return `time ${target.time}`;
  if (target.type === 'position') return `log position ${target.position}`;
  if (target.type === 'name') return `restore point "${target.name}"`;
  if (target.type === 'gtid') return `GTID ${target.gtid} (its transaction included)`;
  return 'the latest archived instant';
}
