import { chmod, chown, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AdapterError, type PointRestoreInput, type PointRestoreResult } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../../config.js';
import { ORIGIN } from '../connection.js';
import { confirmPromoted } from './restore-check.js';
import { extractBase } from './restore-extract.js';
import { canEnter, handOver, serverUser } from './restore-owner.js';
import { checkPortFree, checkTargetPath, findServerBinaries, majorVersion } from './restore-preflight.js';
import { awaitPromotion, startRecoveryServer, stopRecoveryServer, type RecoveryServer } from './restore-server.js';
import { prepareRecovery, removeRecoverySettings } from './restore-settings.js';
import { fetchWal, readSegmentBytes } from './restore-wal.js';

/** In check mode the server only listens on its private socket folder, so any port number names the socket. */
const CHECK_PORT = 5432;

/** The WAL folder beside the target (same file system, so large WAL never lands in a small /tmp). */
function walDirOf(targetPath: string): string {
  return path.join(path.dirname(targetPath), `.${path.basename(targetPath)}.wal`);
}

/** What the restore created, so a failure can put the target back as it was (empty or absent). */
interface Created {
  target?: { existed: boolean; mode: number; uid: number; gid: number };
  walDir?: string;
  runDir?: string;
  server?: RecoveryServer;
  isServerStarted?: boolean;
}

async function undo(targetPath: string, created: Created): Promise<void> {
  if (created.server && created.isServerStarted) await stopRecoveryServer(created.server, 'immediate').catch(() => undefined);
  if (created.target?.existed) {
    for (const entry of await readdir(targetPath).catch(() => [])) await rm(path.join(targetPath, entry), { recursive: true, force: true });
    await chmod(targetPath, created.target.mode).catch(() => undefined);
    await chown(targetPath, created.target.uid, created.target.gid).catch(() => undefined);
  } else if (created.target) {
    await rm(targetPath, { recursive: true, force: true });
  }
  if (created.walDir) await rm(created.walDir, { recursive: true, force: true });
  if (created.runDir) await rm(created.runDir, { recursive: true, force: true });
}

/**
 * Rebuilds the cluster of a physical base backup as it was at `input.target`, in `input.targetPath` (docs/pitr.md,
 * "Restore to an instant"): unpack the base, fetch its WAL beside the target, replay it with a local PostgreSQL of
 * the base's major version until the target, promote; then stop it (check mode) or leave it serving on
 * `servePort`. A refusal writes nothing; a failure or abort leaves the target as it was.
 */
export async function restoreToPoint(config: PostgresSourceConfig, input: PointRestoreInput): Promise<PointRestoreResult> {
  const { signal } = input;
  if (!input.targetPath) throw new AdapterError(ORIGIN, 'CONFIG', 'a PostgreSQL point-in-time restore needs targetPath: the folder the data directory is built in');
  const targetPath = input.targetPath;
  const progress = (message: string) => input.onProgress?.(message);
  const warnings: string[] = [];

  // Refusals first: nothing is written until every one has passed.
  const { exists } = await checkTargetPath(targetPath);
  const major = majorVersion(input.base.serverVersion);
  const binaries = await findServerBinaries(config, major);
  const user = await serverUser();
  if (input.servePort !== undefined) await checkPortFree(input.servePort);
  if (!(await canEnter(user, path.dirname(targetPath)))) {
    throw new AdapterError(ORIGIN, 'CONFIG', `the "${user.name}" user that runs the restored server cannot enter ${path.dirname(targetPath)}: choose a target below folders it can traverse`);
  }
  const walDir = walDirOf(targetPath);
  if (await stat(walDir).catch(() => null)) {
    throw new AdapterError(ORIGIN, 'CONFIG', `${walDir} already exists (left by an earlier restore?); remove it or choose another target`);
  }

  const created: Created = {};
  try {
    const before = exists ? await stat(targetPath) : undefined;
    created.target = { existed: exists, mode: (before?.mode ?? 0o700) & 0o7777, uid: before?.uid ?? 0, gid: before?.gid ?? 0 };
    await mkdir(targetPath, { recursive: true, mode: 0o700 });
    await chmod(targetPath, 0o700);
    created.walDir = walDir;
    await mkdir(walDir, { mode: 0o700 });
    created.runDir = await mkdtemp(path.join(tmpdir(), 'holdfast-pitr-'));

    progress(`unpacking the base backup into ${targetPath}`);
    const unpacked = await extractBase(input.baseStream, targetPath, signal, warnings);
    progress(`unpacked ${unpacked.files} files (${unpacked.bytes} bytes); fetching WAL from ${input.base.startSegment}`);
    const segmentBytes = await readSegmentBytes(binaries.directory, targetPath);
    const segments = await fetchWal(input, {
      walDir,
      segmentBytes,
      ...(binaries.pgWaldump ? { pgWaldump: binaries.pgWaldump } : {}),
      onSegment: (name) => progress(`fetched WAL segment ${name}`),
    });
    progress(`fetched ${segments} WAL segments`);
    warnings.push(...(await prepareRecovery(targetPath, walDir, input.target)));
    for (const folder of [targetPath, walDir]) await handOver(user, folder);

    const server: RecoveryServer = {
      binaries,
      user,
      dataDir: targetPath,
      runDir: created.runDir,
      port: input.servePort ?? CHECK_PORT,
      isServed: input.servePort !== undefined,
    };
    created.server = server;
    progress(`starting PostgreSQL ${major} (${binaries.directory}) to replay the WAL`);
    created.isServerStarted = true;
    await startRecoveryServer(server);
    const outcome = await awaitPromotion(server, signal, progress);
    progress(outcome.stoppedAt ? `recovery ended: ${outcome.stoppedAt}` : 'recovery replayed all fetched WAL');
    const unconfirmed = await confirmPromoted(config, server, signal);
    if (unconfirmed) warnings.push(unconfirmed);
    if (!outcome.lastTransactionAt) warnings.push('the replayed WAL held no transaction after the base backup: the copy is as of the end of the base backup');

    // Promoted: the WAL copy and the settings naming it are no longer needed (a restart does not recover again).
    await removeRecoverySettings(targetPath);
    await rm(walDir, { recursive: true, force: true });
    if (server.isServed) {
      progress(`serving the restored server on 127.0.0.1:${server.port}`);
      warnings.push(`the served server's Unix socket and restore-only pg_hba.conf are in ${server.runDir}; remove that folder after stopping it (pg_ctl -D ${targetPath} stop)`);
      return { warnings, ...(outcome.lastTransactionAt ? { recoveredTo: outcome.lastTransactionAt } : {}), served: { port: server.port, dataDir: targetPath } };
    }
    await stopRecoveryServer(server, 'fast');
    created.isServerStarted = false;
    await rm(created.runDir, { recursive: true, force: true });
    progress('the restored data directory is ready (server stopped)');
    return { warnings, ...(outcome.lastTransactionAt ? { recoveredTo: outcome.lastTransactionAt } : {}) };
  } catch (error) {
    await undo(targetPath, created);
    if (signal.aborted && !(error instanceof AdapterError && error.code === 'ABORTED')) {
      throw new AdapterError(ORIGIN, 'ABORTED', 'the point-in-time restore was aborted', { cause: error });
    }
    throw error;
  }
}
