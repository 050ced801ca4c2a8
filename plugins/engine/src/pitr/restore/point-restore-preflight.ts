import { createServer } from 'node:net';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ConflictError, HttpError, ValidationError, type JobCatalog, type LocalPathPolicy } from '@holdfast/kernel';
import { disposeAll, type AdapterFactory } from '../../run/adapters.js';
import { messageOf } from '../../run/outcome.js';
import type { ChangeLogStore } from '../change-log-store.js';
import { recoveryWindow } from '../recovery-window.js';
import { chooseBase, TargetOutsideWindow } from './choose-base.js';
import type { PointRestoreBody, PointRestoreRequest } from './point-restore-request.js';

// Issue 43 acceptance 7: bad input gets a clear error and changes nothing. Every refusal of a point-in-time restore
// happens here, before a run is queued; the run itself only fails on what cannot be known in advance.

/** 422: the request is well formed but asks for something the archive cannot give (a target outside the window). */
export class UnreachableTarget extends HttpError {
  constructor(message: string) {
    super(422, message);
  }
}

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
  let logKind: string | undefined;
  try {
    logKind = source.pointInTime?.()?.logKind;
  } finally {
    await disposeAll([source]);
  }
  if (!logKind) throw new ConflictError(`Job "${plan.job.name}" is not set up for point-in-time recovery (its source ${plan.source.name} takes no physical base backups)`);
  if (plan.publicKeyEncryption) {
    throw new UnreachableTarget(`Job "${plan.job.name}" is encrypted with a public-key profile: point-in-time restores of such jobs are not supported through the API yet; restore with the recovery kit`);
  }
  if (body.destinationId && !plan.destinations.some((destination) => destination.configId === body.destinationId)) {
    throw new ValidationError(`Invalid request: body.destinationId: "${body.destinationId}" is not a destination of job "${plan.job.name}"`, [{ path: 'body.destinationId', message: 'not a destination of the job' }]);
  }
  const store = ports.store();
  const [bases, pieces] = await Promise.all([store.basesOf(plan.job.id), store.piecesOf(plan.job.id)]);
  const ofKind = bases.filter((base) => base.logKind === logKind);
  const { window } = recoveryWindow({ kind: logKind as 'postgres-wal', bases: ofKind, pieces, now: ports.now?.() ?? new Date() });
  if (!window) throw new ConflictError(`Job "${plan.job.name}" has no recoverable window yet: it needs a base backup followed by unbroken archived log (see GET /api/jobs/${plan.job.id}/point-in-time)`);
  let baseExecutionId: string;
  try {
    baseExecutionId = chooseBase(window, ofKind, body.target, body.destinationId).executionId;
  } catch (error) {
    if (error instanceof TargetOutsideWindow) throw new UnreachableTarget(error.message);
    throw error;
  }
  await checkTargetPath(ports.localPaths(), body.targetPath);
  if (body.servePort !== undefined) await checkPortFree(body.servePort);
  return {
    pointInTime: true,
    jobId: plan.job.id,
    target: body.target,
    targetPath: body.targetPath,
    ...(body.servePort !== undefined ? { servePort: body.servePort } : {}),
    ...(body.destinationId ? { destinationId: body.destinationId } : {}),
    baseExecutionId,
  };
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
