// What the recovery kit's point-in-time restore knows about a base backup (its sidecar, and backup_label and
// backup_manifest inside it), the recovery target, and the settings it writes into the restored data directory so
// PostgreSQL replays the WAL to the target and promotes.
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { EXIT, KitError } from './hfenc.mjs';
import { positionValue } from './pitr-wal.mjs';

/** The restore folder inside the data directory; restore_command names it relative to the data directory. */
export const WAL_FOLDER = 'holdfast-restore-wal';
export const BEGIN = '# --- holdfast recovery kit: recovery settings (ignored once the server has promoted) ---';
export const END = '# --- holdfast recovery kit: end of recovery settings ---';

const usage = (message) => new KitError(EXIT.usage, message);

/** The target from the options: exactly one of --target-time, --target-lsn, --target-name, --latest. */
export function parseTarget(values) {
  const given = ['target-time', 'target-lsn', 'target-name', 'latest'].filter((name) => values[name] !== undefined);
  if (given.length !== 1) throw usage('give exactly one target: --target-time <ISO time with offset>, --target-lsn <X/Y>, --target-name <restore point> or --latest');
  if (values.latest) return { type: 'latest' };
  if (values['target-name'] !== undefined) return { type: 'name', name: values['target-name'] };
  if (values['target-lsn'] !== undefined) {
    if (positionValue(values['target-lsn']) === undefined) throw usage(`--target-lsn must be a WAL position like 0/3000028, not "${values['target-lsn']}"`);
    return { type: 'position', position: values['target-lsn'].toUpperCase() };
  }
  const text = values['target-time'];
  // Without an offset the instant would depend on this machine's time zone: refused rather than guessed.
  if (!/^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d{1,6})?)?(Z|[+-]\d\d:?\d\d)$/i.test(text)) {
    throw usage(`--target-time needs an ISO 8601 time with its offset, like 2026-12-06T14:03:27+01:00 or 2026-12-06T13:03:27Z, not "${text}"`);
  }
  const time = new Date(text.replace(' ', 'T'));
  if (Number.isNaN(time.getTime())) throw usage(`--target-time "${text}" is not a valid time`);
  return { type: 'time', time };
}

export function describeTarget(target) {
  if (target.type === 'time') return `time ${target.time.toISOString()}`;
  if (target.type === 'position') return `WAL position ${target.position}`;
  if (target.type === 'name') return `restore point "${target.name}"`;
  return 'the end of the archived WAL (latest)';
}

/** The `pointInTime` part of `<base>.meta.json`, or undefined without a sidecar. */
export function readBaseSidecar(baseFile) {
  const path = `${baseFile}.meta.json`;
  if (!existsSync(path)) return undefined;
  let meta;
  try {
    meta = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new KitError(EXIT.damaged, `${path} is not readable JSON: ${error.message}`);
  }
  if (meta.pointInTime && typeof meta.pointInTime.startSegment !== 'string') throw new KitError(EXIT.damaged, `${path}: pointInTime has no startSegment`);
  if (!meta.pointInTime) throw new KitError(EXIT.usage, `${path} describes no base backup (no "pointInTime"): --base must be a base backup of a point-in-time job`);
  return { path, meta, base: meta.pointInTime };
}

/**
 * Refuses a target before the base backup is consistent, with what the sidecar (or, without one, backup_label and
 * backup_manifest) says: replay must pass the base's end before the copy is a valid cluster.
 */
export function checkTargetAfterBase(target, facts) {
  if (target.type === 'time' && facts.consistentAt && target.time.getTime() < Date.parse(facts.consistentAt)) {
    throw new KitError(EXIT.target, `target time ${target.time.toISOString()} is before this base backup is consistent (${facts.consistentAt}): choose a later time, or an older base backup`);
  }
  if (target.type === 'time' && !facts.consistentAt && facts.startedAt && target.time.getTime() < facts.startedAt.getTime()) {
    throw new KitError(EXIT.target, `target time ${target.time.toISOString()} is before this base backup started (${facts.startedAt.toISOString()}): choose a later time, or an older base backup`);
  }
  if (target.type === 'position' && facts.stopPosition && positionValue(target.position) < positionValue(facts.stopPosition)) {
    throw new KitError(EXIT.target, `target WAL position ${target.position} is before the end of this base backup (${facts.stopPosition}): choose a later position, or an older base backup`);
  }
}

/** Start segment, timeline, start time and stop position from the unpacked base's backup_label and backup_manifest. */
export function readBackupLabel(dataDir) {
  const labelPath = join(dataDir, 'backup_label');
  if (!existsSync(labelPath)) throw new KitError(EXIT.damaged, 'the base backup holds no backup_label: it is not a pg_basebackup base backup');
  const label = readFileSync(labelPath, 'utf8');
  const start = /^START WAL LOCATION: ([0-9A-F]+\/[0-9A-F]+) \(file ([0-9A-F]{24})\)/m.exec(label);
  const timeline = /^START TIMELINE: (\d+)/m.exec(label);
  if (!start) throw new KitError(EXIT.damaged, 'backup_label of the base backup has no START WAL LOCATION');
  const startTime = /^START TIME: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) (\S+)/m.exec(label);
  const facts = {
    startPosition: start[1],
    startSegment: start[2],
    timeline: timeline ? Number(timeline[1]) : Number.parseInt(start[2].slice(0, 8), 16),
    startedAt: startTime && /^(UTC|GMT)$/.test(startTime[2]) ? new Date(`${startTime[1].replace(' ', 'T')}Z`) : undefined,
  };
  const manifestPath = join(dataDir, 'backup_manifest');
  if (existsSync(manifestPath)) {
    try {
      const ranges = JSON.parse(readFileSync(manifestPath, 'utf8'))['WAL-Ranges'];
      const stop = ranges?.[ranges.length - 1]?.['End-LSN'];
      if (positionValue(stop) !== undefined) facts.stopPosition = stop;
    } catch {
      // The manifest only refines the check of an LSN target; without it PostgreSQL still refuses one too early.
    }
  }
  return facts;
}

/** A value quoted for postgresql.conf. */
function quoted(value) {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** `2026-12-06 04:30:00.123+00`: an instant PostgreSQL reads the same whatever its TimeZone setting. */
function postgresInstant(time) {
  return `${time.toISOString().replace('T', ' ').replace('Z', '')}+00`;
}

function targetLines(target) {
  if (target.type === 'time') return [`recovery_target_time = ${quoted(postgresInstant(target.time))}`];
  if (target.type === 'position') return [`recovery_target_lsn = ${quoted(target.position)}`];
  if (target.type === 'name') return [`recovery_target_name = ${quoted(target.name)}`];
  return []; // latest: replay all the WAL restore_command finds, then promote
}

// Settings that name files of the source host, and includes of files that did not travel with the base.
const SOURCE_PATH_SETTING = /^\s*(data_directory|config_file|hba_file|ident_file|external_pid_file)\s*(=|\s)/;
const INCLUDE = /^\s*(include|include_dir)\s*=?\s*'([^']*)'/;

/**
 * Makes the configuration start here: a base from a Debian server has no postgresql.conf nor pg_hba.conf (they live
 * in /etc there), so minimal ones are written; in a copied postgresql.conf, settings naming the source host's files
 * and includes of missing files are commented out. Returns notes for the user.
 */
async function makeConfigurationLocal(dataDir) {
  const notes = [];
  const conf = join(dataDir, 'postgresql.conf');
  if (!existsSync(conf)) {
    await writeFile(conf, '# Written by the Holdfast recovery kit: the base backup had no postgresql.conf.\n', { mode: 0o600 });
    notes.push('the base backup had no postgresql.conf (Debian keeps it in /etc): an empty one was written, so PostgreSQL runs with its defaults (port 5432)');
  } else {
    const lines = (await readFile(conf, 'utf8')).split('\n');
    const local = lines.map((line) => {
      const include = INCLUDE.exec(line);
      const isMissingInclude = include !== null && !existsSync(resolve(dataDir, include[2]));
      if (!SOURCE_PATH_SETTING.test(line) && !isMissingInclude) return line;
      notes.push(`postgresql.conf: "${line.trim()}" names a file of the source host; commented out`);
      return `# holdfast recovery kit: ${line}`;
    });
    await writeFile(conf, local.join('\n'));
  }
  if (!existsSync(join(dataDir, 'pg_hba.conf'))) {
    await writeFile(
      join(dataDir, 'pg_hba.conf'),
      '# Written by the Holdfast recovery kit: the base backup had no pg_hba.conf.\nlocal all all peer\nhost all all 127.0.0.1/32 scram-sha-256\nhost all all ::1/128 scram-sha-256\n',
      { mode: 0o600 },
    );
    notes.push('the base backup had no pg_hba.conf: one allowing local (peer) and password logins over 127.0.0.1 was written');
  }
  if (!existsSync(join(dataDir, 'pg_ident.conf'))) await writeFile(join(dataDir, 'pg_ident.conf'), '', { mode: 0o600 });
  return notes;
}

/**
 * Turns the unpacked base into a data directory that replays to `target` and promotes: recovery.signal, and the
 * recovery settings appended to postgresql.auto.conf. restore_command copies from the WAL folder inside the data
 * directory by a relative path (PostgreSQL runs it in the data directory), so the folder may be moved as a whole.
 * The copy never archives into the source's archive nor follows the source as a standby.
 */
export async function writeRecoverySettings(dataDir, target, note) {
  const notes = await makeConfigurationLocal(dataDir);
  // A base taken from a standby carries its standby.signal: the copy must recover and promote, not stay a standby.
  await rm(join(dataDir, 'standby.signal'), { force: true });
  await writeFile(join(dataDir, 'recovery.signal'), '', { mode: 0o600 });
  const lines = [
    '',
    `# Written by the Holdfast recovery kit on ${new Date().toISOString()}: restore to ${describeTarget(target)}.`,
    'archive_mode = off',
    "primary_conninfo = ''",
    "primary_slot_name = ''",
    BEGIN,
    `restore_command = ${quoted(`cp "${WAL_FOLDER}/%f" "%p"`)}`,
    ...targetLines(target),
    'recovery_target_inclusive = on',
    "recovery_target_action = 'promote'",
    // The restored WAL is the base's timeline only, so replay stays on it.
    "recovery_target_timeline = 'current'",
    END,
    '',
  ];
  await appendFile(join(dataDir, 'postgresql.auto.conf'), lines.join('\n'), { mode: 0o600 });
  for (const line of notes) note(line);
}

/** Removes the recovery block once the server has promoted (the WAL folder it names is deleted with it). */
export async function removeRecoverySettings(dataDir) {
  const file = join(dataDir, 'postgresql.auto.conf');
  const text = await readFile(file, 'utf8');
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start < 0 || end < start) return;
  await writeFile(file, text.slice(0, start) + text.slice(end + END.length + 1));
}
