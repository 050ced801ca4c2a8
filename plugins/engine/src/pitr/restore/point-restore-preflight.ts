import { createServer } from 'node:net';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ConflictError, HttpError, ValidationError, type ChangeLogKind, type JobCatalog, type LocalPathPolicy, type RunPlan, type SourceAdapter } from '@holdfast/kernel';
import { disposeAll, type AdapterFactory } from '../../run/adapters.js';
import { messageOf } from '../../run/outcome.js';
import type { ChangeLogStore, RecordedBase } from '../change-log-store.js';
import { recoveryWindow } from '../recovery-window.js';
import { databasesOfBase } from './base-databases.js';
import { chooseBase, TargetOutsideWindow } from './choose-base.js';
import { isPositionOf, POSITION_EXAMPLE } from './log-positions.js';
import { reservedTargetProblem } from './mysql-database-name.js';
import type { PointRestoreBody, PointRestoreRequest } from './point-restore-request.js';
import { pointRestoreServer } from './point-restore-server.js';
import { UnreachableTarget } from './unreachable-target.js';

// Issue 43 acceptance 7: bad input gets a clear error and changes nothing. Every refusal of a point-in-time restore
// happens here, before a run is queued; the run itself only fails on what cannot be known in advance.

export { UnreachableTarget };

/** Ports of the checks, resolved lazily. */
export interface PointRestorePorts {
  catalog: () => JobCatalog;
  adapters: () => AdapterFactory;
  store: () => ChangeLogStore;
  /** The operator's local path rule (`HOLDFAST_LOCAL_ROOTS`); absent in a host that registers none. */
  localPaths: () => LocalPathPolicy | undefined;
  now?: () => Date;
}

/** Checks a restore request of job `jobId` and answers the request to store on the run, or throws the refusal. */
export async function preflightPointRestore(ports: PointRestorePorts, jobId: string, body: PointRestoreBody): Promise<PointRestoreRequest> {
  const plan = await ports.catalog().resolveRunPlan(jobId);
  const source = ports.adapters().source(plan.source);
  try {
    const logKind = source.pointInTime?.()?.logKind;
    if (!logKind) throw new ConflictError(`Job "${plan.job.name}" is not set up for point-in-time recovery (its source ${plan.source.name} takes no physical base backups)`);
    const fields = checkFieldsOfKind(logKind, body);
    if (plan.publicKeyEncryption) {
      throw new UnreachableTarget(`Job "${plan.job.name}" is encrypted with a public-key profile: point-in-time restores of such jobs are not supported through the API yet; restore with the recovery kit`);
    }
    if (body.destinationId && !plan.destinations.some((destination) => destination.configId === body.destinationId)) {
      throw new ValidationError(`Invalid request: body.destinationId: "${body.destinationId}" is not a destination of job "${plan.job.name}"`, [{ path: 'body.destinationId', message: 'not a destination of the job' }]);
    }
    const base = await chooseWindowBase(ports, plan, logKind, body);
    const request: PointRestoreRequest = {
      pointInTime: true,
      jobId: plan.job.id,
      target: body.target,
      ...(body.destinationId ? { destinationId: body.destinationId } : {}),
      baseExecutionId: base.executionId,
    };
    if (fields.kind === 'mysql-binlog') {
      const readFrom = plan.destinations.filter((destination) => !body.destinationId || destination.configId === body.destinationId);
      // The server is checked first: a refusal naming targetSourceId costs no read of the base.
      const server = await pointRestoreServer(ports.catalog(), ports.adapters(), plan, body.targetSourceId);
      try {
        await checkDatabaseInBase(ports, readFrom, base, fields.database.name);
        await checkNewDatabase(server.instance, server.label, fields.database.into);
      } finally {
        await disposeAll([server.instance]);
      }
      const onServer = server.isJobSource ? {} : { targetSource: { id: server.config.configId, name: server.label } };
      return { ...request, database: fields.database, ...onServer };
    }
    await checkTargetPath(ports.localPaths(), fields.targetPath);
    if (body.servePort !== undefined) await checkPortFree(body.servePort);
    return { ...request, targetPath: fields.targetPath, ...(body.servePort !== undefined ? { servePort: body.servePort } : {}) };
  } finally {
    await disposeAll([source]);
  }
}

/** The fields a job of each log kind restores with, once checked against the body. */
type KindFields = { kind: 'postgres-wal'; targetPath: string } | { kind: 'mysql-binlog'; database: { name: string; into: string } };

function refuse(field: string, message: string): never {
  throw new ValidationError(`Invalid request: body.${field}: ${message}`, [{ path: `body.${field}`, message }]);
}

/**
 * 400 for a body written for the other kind of job: PostgreSQL builds a data directory on the Holdfast host
 * (`targetPath`, `servePort`), MySQL/MariaDB builds a new database on the source's own server (`database`,
 * `targetDatabase`); log positions and restore point names are the source's own.
 */
function checkFieldsOfKind(kind: ChangeLogKind, body: PointRestoreBody): KindFields {
  if (body.target.type === 'position' && !isPositionOf(kind, body.target.position)) {
    refuse('target.position', `"${body.target.position}" is not a log position of this job's source: it takes ${POSITION_EXAMPLE[kind]}`);
  }
  if (kind === 'mysql-binlog') {
    if (body.target.type === 'name') refuse('target.name', 'named restore points are PostgreSQL only; restore a MySQL/MariaDB job to latest, a time or a binary log position');
    if (body.targetPath !== undefined) refuse('targetPath', 'a MySQL/MariaDB point-in-time restore builds a new database on the source\'s own server (targetDatabase), not a folder');
    if (body.servePort !== undefined) refuse('servePort', 'a MySQL/MariaDB point-in-time restore is served by the server it is built on; servePort is PostgreSQL only');
    if (body.database === undefined) refuse('database', 'required for a MySQL/MariaDB job: the database of the base backup to restore');
    if (body.targetDatabase === undefined) refuse('targetDatabase', 'required for a MySQL/MariaDB job: the new database the copy is built in');
    const reserved = reservedTargetProblem(body.targetDatabase!);
    if (reserved) refuse('targetDatabase', `${reserved}; choose a new database name`);
    return { kind, database: { name: body.database!, into: body.targetDatabase! } };
  }
  if (body.target.type === 'gtid') refuse('target.gtid', 'GTID targets are MySQL/MariaDB only; restore a PostgreSQL job to latest, a time, a log position or a restore point name');
  if (body.targetSourceId !== undefined) refuse('targetSourceId', 'targetSourceId is for MySQL/MariaDB jobs (the server the new database is built on); a PostgreSQL job restores its whole cluster into targetPath on the Holdfast host');
  if (body.database !== undefined) refuse('database', 'database and targetDatabase are for MySQL/MariaDB jobs; a PostgreSQL job restores its whole cluster into targetPath');
  if (body.targetDatabase !== undefined) refuse('targetDatabase', 'database and targetDatabase are for MySQL/MariaDB jobs; a PostgreSQL job restores its whole cluster into targetPath');
  if (body.targetPath === undefined) refuse('targetPath', 'required for a PostgreSQL job: the absent or empty folder the data directory is built in');
  return { kind: 'postgres-wal', targetPath: body.targetPath! };
}

/** The base backup the target starts from, in the job's recoverable window (409 without a window, 422 outside it). */
async function chooseWindowBase(ports: PointRestorePorts, plan: RunPlan, logKind: ChangeLogKind, body: PointRestoreBody): Promise<RecordedBase> {
  const store = ports.store();
  const [bases, pieces] = await Promise.all([store.basesOf(plan.job.id), store.piecesOf(plan.job.id)]);
  const ofKind = bases.filter((base) => base.logKind === logKind);
  const { window } = recoveryWindow({ kind: logKind, bases: ofKind, pieces, now: ports.now?.() ?? new Date() });
  if (!window) throw new ConflictError(`Job "${plan.job.name}" has no recoverable window yet: it needs a base backup followed by unbroken archived log (see GET /api/jobs/${plan.job.id}/point-in-time)`);
  try {
    return chooseBase(window, ofKind, body.target, body.destinationId);
  } catch (error) {
    if (error instanceof TargetOutsideWindow) throw new UnreachableTarget(error.message);
    throw error;
  }
}

/** 422 when the chosen base backup does not hold `name` (the message lists what it holds). */
async function checkDatabaseInBase(ports: PointRestorePorts, destinations: RunPlan['destinations'], base: RecordedBase, name: string): Promise<void> {
  let databases: string[];
  try {
    databases = await databasesOfBase(ports.adapters(), destinations, base);
  } catch (error) {
    throw new UnreachableTarget(`database "${name}" cannot be checked against the base backup the target starts from: ${messageOf(error)}`);
  }
  if (!databases.includes(name)) {
    const held = databases.length > 0 ? databases.map((database) => `"${database}"`).join(', ') : 'no database';
    throw new UnreachableTarget(`database "${name}" is not in base backup ${base.storageKey} (consistent at ${base.consistentAt.toISOString()}), the one the target starts from; it holds ${held}`);
  }
}

/**
 * 409 when `into` exists on the source's server: the restore only ever creates a new database, it never writes into
 * one. Names are compared without case, which also covers servers that fold database names to lower case.
 */
async function checkNewDatabase(source: SourceAdapter, sourceName: string, into: string): Promise<void> {
  let existing: string[];
  try {
    existing = await source.listDatabases();
  } catch (error) {
    throw new HttpError(502, `the databases of ${sourceName} could not be listed to check that targetDatabase "${into}" is new: ${messageOf(error)}`);
  }
  const clash = existing.find((name) => name.toLowerCase() === into.toLowerCase());
  if (clash !== undefined) {
    throw new ConflictError(`targetDatabase "${into}" already exists on ${sourceName}${clash === into ? '' : ` (as "${clash}"; names are compared without case)`}; a point-in-time restore only builds a new database: choose another name or drop that one first`);
  }
}

/**
 * The target and the WAL folder the restore puts beside it must be allowed local paths (403 otherwise: a restore
 * never writes outside what the operator allowed); the target must be absent or an empty folder (409), its parent a
 * folder (400).
 */
async function checkTargetPath(policy: LocalPathPolicy | undefined, targetPath: string): Promise<void> {
  if (policy) {
    const walDir = join(dirname(targetPath), `.${basename(targetPath)}.wal`);
    for (const path of [targetPath, walDir]) {
      try {
        await policy.check(path, 'restore-target');
      } catch (error) {
        if ((error as Error)?.name !== 'LocalPathRefusedError') throw error;
        const what = path === targetPath ? 'targetPath' : `the WAL folder the restore puts beside targetPath (${path})`;
        throw new HttpError(403, `${what}: ${messageOf(error)}`);
      }
    }
  }
  const parent = await stat(dirname(targetPath)).catch(() => null);
  if (!parent?.isDirectory()) throw new ValidationError(`Invalid request: body.targetPath: the parent folder ${dirname(targetPath)} does not exist`, [{ path: 'body.targetPath', message: 'parent folder missing' }]);
  const info = await stat(targetPath).catch(() => null);
  if (!info) return;
  if (!info.isDirectory()) throw new ConflictError(`targetPath ${targetPath} exists and is not a folder; choose an absent or empty folder`);
  const entries = await readdir(targetPath);
  if (entries.length > 0) throw new ConflictError(`targetPath ${targetPath} is not empty (${entries.length} entries); a point-in-time restore builds a whole data directory and only goes into an absent or empty folder`);
}

/** 409 when something listens on 127.0.0.1:`port` already (the restored server could not start there). */
async function checkPortFree(port: number): Promise<void> {
  const isFree = await new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () => probe.close(() => resolve(true)));
  });
  if (!isFree) throw new ConflictError(`servePort ${port} is in use on 127.0.0.1; choose a free port for the restored server`);
}
