// `holdfast-decrypt.mjs pitr`: restores a PostgreSQL base backup and its archived WAL to a point in time, without
// Holdfast (docs/pitr.md, "Restoring without Holdfast"). The base is decrypted, decompressed and unpacked into a new
// data directory; the WAL it needs is decrypted into a folder inside it; the recovery settings make PostgreSQL replay
// to the target and promote. Everything is built in <out>.partial and renamed at the end, so a failed run leaves
// nothing that looks usable. This is a second reader of what the engine writes: it shares no code with it.
import { spawnSync } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { chmod, mkdir, rename, rm, rmdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { codecOfName, codecOfSidecar, decodeFile, ensureDecoder } from './decompress.mjs';
import { EXIT, KitError, readKey } from './hfenc.mjs';
import { checkSegmentSize, planWal, readSegmentHeader, restorePiece, scanWalFolder, WalNames } from './pitr-wal.mjs';
import { commandLine, findServerPrograms, handOver, newestCommitTime, RESTORE_LOG, serverOwner, startAndAwaitPromotion, startArguments } from './pitr-server.mjs';
import { checkTargetAfterBase, describeTarget, readBackupLabel, readBaseSidecar, removeRecoverySettings, WAL_FOLDER, writeRecoverySettings } from './pitr-settings.mjs';
import { unpackTar } from './tar-unpack.mjs';

function note(message) {
  process.stderr.write(`holdfast-decrypt: ${message}\n`);
}

// The key file is read at once (a typo fails before any work); HOLDFAST_KEY only when an encrypted file turns up.
function keyGetter(keyFile) {
  let key = keyFile ? readKey(keyFile) : undefined;
  return () => {
    key ??= readKey(undefined);
    return key;
  };
}

function checkOutputFolder(out) {
  const existing = lstatSync(out, { throwIfNoEntry: false });
  if (existing && (!existing.isDirectory() || readdirSync(out).length > 0)) {
    throw new KitError(EXIT.io, `${out} exists and is not an empty folder; restore into a new folder`);
  }
  const staging = `${out}.partial`;
  if (lstatSync(staging, { throwIfNoEntry: false })) throw new KitError(EXIT.io, `${staging} exists (left by an interrupted run?); remove it or restore into another folder`);
  return staging;
}

/**
 * Runs the whole restore. `options`: base, wal, out, keyFile, target ({ type, ... }), start, port, pgBin, runAs.
 * Returns the exit code.
 */
export async function restoreToPoint(options) {
  const out = resolve(options.out);
  if (!statSync(options.base, { throwIfNoEntry: false })?.isFile()) throw new KitError(EXIT.io, `base backup not found: ${options.base}`);
  if (!statSync(options.wal, { throwIfNoEntry: false })?.isDirectory()) throw new KitError(EXIT.io, `--wal ${options.wal} is not a folder`);
  const staging = checkOutputFolder(out);
  const key = keyGetter(options.keyFile);
  const { target } = options;
  const sidecar = readBaseSidecar(options.base);
  if (sidecar) checkTargetAfterBase(target, sidecar.base);
  else note(`no sidecar ${options.base}.meta.json: the base backup's facts are read from its backup_label`);
  const owner = serverOwner(options.runAs);
  const codec = codecOfSidecar(sidecar?.meta) ?? codecOfName(options.base);
  ensureDecoder(codec);

  await mkdir(dirname(staging), { recursive: true });
  await mkdir(staging, { mode: 0o700 });
  try {
    note(`unpacking the base backup ${options.base} (${codec === 'none' ? 'not compressed' : codec}) into ${staging}`);
    let unpacked;
    await decodeFile(options.base, { key, codec, label: options.base, sink: async (source) => (unpacked = await unpackTar(source, staging)) });
    for (const warning of unpacked.warnings) note(warning);
    note(`unpacked ${unpacked.counts.files} files (${unpacked.counts.bytes} bytes)`);

    const facts = { ...readBackupLabel(staging) };
    if (sidecar && sidecar.base.startSegment !== facts.startSegment) {
      throw new KitError(EXIT.damaged, `${sidecar.path} says the base starts at WAL segment ${sidecar.base.startSegment}, its backup_label says ${facts.startSegment}: the sidecar belongs to another backup`);
    }
    checkTargetAfterBase(target, { ...facts, consistentAt: sidecar?.base.consistentAt, stopPosition: sidecar?.base.stopPosition ?? facts.stopPosition });
    const major = readFileSync(join(staging, 'PG_VERSION'), 'utf8').trim();
    for (const folder of ['pg_wal', 'pg_wal/archive_status', WAL_FOLDER]) await mkdir(join(staging, folder), { recursive: true, mode: 0o700 });

    const segmentFiles = await restoreWal(options.wal, facts, target, join(staging, WAL_FOLDER), key, staging);
    const programs = findServerPrograms(major, options.pgBin);
    await checkTargetReachable(target, programs, segmentFiles);

    await writeRecoverySettings(staging, target, note);
    await chmod(staging, 0o700);
    if (owner) await handOver(staging, owner);
    if (lstatSync(out, { throwIfNoEntry: false })) await rmdir(out);
    await rename(staging, out);
  } catch (error) {
    await rm(staging, { recursive: true, force: true }).catch(() => note(`could not remove ${staging}; do not use it`));
    if (error instanceof KitError || !error.code) throw error;
    throw new KitError(EXIT.io, `${error.code}: ${error.message}`);
  }
  return finish(options, out, owner);
}

/** Restores the WAL the base needs into `walDir`; returns the restored files in order. */
async function restoreWal(walFolder, facts, target, walDir, key, dataDir) {
  const { pieces, ignored } = scanWalFolder(walFolder, facts.timeline);
  if (ignored > 0) note(`${ignored} file(s) in ${walFolder} are not WAL pieces of timeline ${facts.timeline} and were ignored`);
  const first = pieces.get(facts.startSegment);
  if (!first) planWal(pieces, { ...facts, names: new WalNames() }); // throws the missing start segment
  // The first segment's header says the cluster's segment size (names depend on it) and whose WAL this is.
  const firstFile = await restorePiece({ name: facts.startSegment, path: first.complete ?? first.partial }, walDir, key);
  const header = readSegmentHeader(firstFile);
  const systemId = readFileSync(join(dataDir, 'global', 'pg_control')).subarray(0, 8);
  if (!header.systemId.equals(systemId)) {
    throw new KitError(EXIT.damaged, `the WAL in ${walFolder} is from another server (system ${header.systemId.readBigUInt64LE()}, the base backup's is ${systemId.readBigUInt64LE()})`);
  }
  const names = new WalNames(header.segmentBytes);
  if (!Number.isInteger(names.perLog) || header.segmentBytes < 1024 * 1024) throw new KitError(EXIT.damaged, `${firstFile}: implausible WAL segment size ${header.segmentBytes}`);
  let lastSequence;
  if (target.type === 'position') {
    const needed = names.sequenceOfPosition(target.position);
    const newest = Math.max(...[...pieces.keys()].map((name) => names.sequence(name) ?? -1));
    if (needed > newest) {
      throw new KitError(EXIT.target, `target WAL position ${target.position} lies after the archived WAL (the newest piece is ${names.name(facts.timeline, newest)}): download newer WAL, or choose an earlier position`);
    }
    lastSequence = needed + 1; // a record may end in the next segment
  }
  const plan = planWal(pieces, { startSegment: facts.startSegment, timeline: facts.timeline, names, lastSequence });
  const files = [firstFile];
  await checkSegmentSize(firstFile, header.segmentBytes, plan[0].partial);
  for (const piece of plan.slice(1)) {
    const file = await restorePiece(piece, walDir, key);
    await checkSegmentSize(file, header.segmentBytes, piece.partial);
    files.push(file);
  }
  const last = plan[plan.length - 1];
  note(`restored ${plan.length} WAL segment(s), ${facts.startSegment} to ${last.name}${last.partial ? ' (the newest from its partial)' : ''}`);
  return files;
}

/** A time target after the newest commit in the WAL is never reached: PostgreSQL would stop with a FATAL. */
async function checkTargetReachable(target, programs, segmentFiles) {
  if (target.type !== 'time') return;
  if (!programs.pgWaldump) {
    note('pg_waldump was not found, so whether the WAL reaches the target time is not checked here: PostgreSQL says so when it does not');
    return;
  }
  const newest = await newestCommitTime(programs.pgWaldump, segmentFiles);
  if (newest && target.time.getTime() > newest.getTime()) {
    throw new KitError(
      EXIT.target,
      `target time ${target.time.toISOString()} is after the newest commit in the archived WAL (${newest.toISOString()}): replay cannot reach it. ` +
        'Download newer WAL, choose an earlier time, or restore with --latest',
    );
  }
}

/** Prints how to start the server, or starts it (--start) and waits until it has promoted. */
async function finish(options, out, owner) {
  const major = readFileSync(join(out, 'PG_VERSION'), 'utf8').trim();
  const programs = findServerPrograms(major, options.pgBin);
  const pgCtl = programs.pgCtl ?? 'pg_ctl';
  if (!programs.pgCtl) note(`no pg_ctl of PostgreSQL ${major} found${programs.tried.length ? ` (tried ${programs.tried.join(', ')})` : ''}: install PostgreSQL ${major} (Debian/Ubuntu: postgresql-${major}) or pass --pg-bin <folder>`);
  const restoredWal = join(out, WAL_FOLDER);
  if (!options.start) {
    process.stdout.write(
      [
        `The data directory is ready: ${out} (PostgreSQL ${major}, restore to ${describeTarget(options.target)}).`,
        'Start PostgreSQL on it:',
        `  ${commandLine(owner, startArguments(pgCtl, out, options.port))}`,
        `It replays the WAL to the target and promotes; "database system is ready to accept connections" in ${join(out, RESTORE_LOG)} says it is done.`,
        `Then check the data, and remove ${restoredWal} (not needed once the server has promoted).`,
        '',
      ].join('\n'),
    );
    return 0;
  }
  if (!programs.pgCtl) throw new KitError(EXIT.server, `--start needs pg_ctl of PostgreSQL ${major}; the data directory ${out} is ready to start by hand`);
  note(`starting PostgreSQL ${major} (${programs.dir}) on ${out}${options.port ? ` port ${options.port}` : ''}: replaying the WAL`);
  let outcome;
  try {
    outcome = await startAndAwaitPromotion({ pgCtl, dataDir: out, port: options.port, owner, onProgress: note });
  } catch (error) {
    const stop = startArguments(pgCtl, out).slice(0, 3).concat(['-m', 'immediate', 'stop']);
    const [command, ...args] = owner ? ['runuser', '-u', owner.name, '--', ...stop] : stop;
    spawnSync(command, args, { stdio: 'ignore' });
    error.message += `. The data directory ${out} is left as it was prepared: fix the target in postgresql.auto.conf and start it again, or remove it`;
    error.isAfterRestore = true;
    throw error;
  }
  // Promoted: the restore folder and the settings naming it are no longer used (a restart does not recover again).
  await removeRecoverySettings(out);
  await rm(restoredWal, { recursive: true, force: true });
  process.stdout.write(
    [
      `PostgreSQL ${major} is running on ${out}${options.port ? `, port ${options.port}` : ''}, promoted after replaying ${outcome.segments} WAL segment(s).`,
      ...(outcome.stoppedAt ? [`Replay: ${outcome.stoppedAt}`] : []),
      outcome.lastTransactionAt ? `Last transaction replayed: ${outcome.lastTransactionAt}.` : 'No transaction was replayed after the base backup: the copy is as of its end.',
      `Stop it with: ${commandLine(owner, [pgCtl, '-D', out, 'stop'])}`,
      '',
    ].join('\n'),
  );
  return 0;
}
