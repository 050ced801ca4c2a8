import { existsSync } from 'node:fs';
import { appendFile, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { RecoveryTarget } from '@holdfast/sdk';

const BEGIN = '# --- holdfast point-in-time restore: recovery settings (removed once recovery is over) ---';
const END = '# --- holdfast point-in-time restore: end of recovery settings ---';

/** A value quoted for postgresql.conf. */
function quoted(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** `2026-12-06 04:30:00.123+00`: an instant PostgreSQL reads the same whatever the server's TimeZone. */
export function postgresInstant(time: Date): string {
  return `${time.toISOString().replace('T', ' ').replace('Z', '')}+00`;
}

function targetLines(target: RecoveryTarget): string[] {
  switch (target.type) {
    case 'latest':
      return []; // no target: replay everything restore_command can find, then promote
    case 'time':
      return [`recovery_target_time = ${quoted(postgresInstant(target.time))}`];
    case 'position':
      return [`recovery_target_lsn = ${quoted(target.position)}`];
    case 'name':
      return [`recovery_target_name = ${quoted(target.name)}`];
  }
}

// Settings of the source that would point the copy at the source's files or the source's archive and standby setup.
const SOURCE_PATH_SETTING = /^\s*(data_directory|config_file|hba_file|ident_file|external_pid_file)\s*(=|\s)/;
const INCLUDE = /^\s*(include|include_dir)\s*=?\s*'([^']*)'/;

/**
 * Makes the copied configuration start on this host: a data directory from Debian has no postgresql.conf or
 * pg_hba.conf (they live in /etc there), so minimal ones are written; in a copied postgresql.conf, the settings that
 * name files of the source host and includes of files that did not travel with the base are commented out.
 */
async function makeConfigurationLocal(dataDir: string, notes: string[]): Promise<void> {
  const conf = path.join(dataDir, 'postgresql.conf');
  if (!existsSync(conf)) {
    await writeFile(conf, '# Written by Holdfast: the base backup had no postgresql.conf (kept outside the data directory on its server).\n', { mode: 0o600 });
    notes.push('the base backup had no postgresql.conf (Debian keeps it in /etc): a minimal one was written, the server runs with default settings');
  } else {
    const lines = (await readFile(conf, 'utf8')).split('\n');
    const local = lines.map((line) => {
      const include = INCLUDE.exec(line);
      const isMissingInclude = include !== null && !existsSync(path.resolve(dataDir, include[2]!));
      if (!SOURCE_PATH_SETTING.test(line) && !isMissingInclude) return line;
      notes.push(`postgresql.conf: "${line.trim()}" names a file of the source host and was commented out`);
      return `# holdfast restore: ${line}`;
    });
    await writeFile(conf, local.join('\n'));
  }
  const hba = path.join(dataDir, 'pg_hba.conf');
  if (!existsSync(hba)) {
    await writeFile(
      hba,
      '# Written by Holdfast: the base backup had no pg_hba.conf. Local connections as the same OS user; passwords over TCP.\n' +
        'local all all peer\nhost all all 127.0.0.1/32 scram-sha-256\nhost all all ::1/128 scram-sha-256\n',
      { mode: 0o600 },
    );
    notes.push('the base backup had no pg_hba.conf: one allowing local peer and password logins over 127.0.0.1 was written');
  }
  const ident = path.join(dataDir, 'pg_ident.conf');
  if (!existsSync(ident)) await writeFile(ident, '', { mode: 0o600 });
}

/**
 * Turns an unpacked base into a data directory that replays to `target`: `recovery.signal`, the recovery settings
 * appended to postgresql.auto.conf between markers (so they can be removed afterwards), and lasting settings that
 * keep the copy from archiving into the source's archive or following the source as a standby. Returns notes worth
 * reporting as warnings.
 */
export async function prepareRecovery(dataDir: string, walDir: string, target: RecoveryTarget): Promise<string[]> {
  const notes: string[] = [];
  await makeConfigurationLocal(dataDir, notes);
  // A base taken from a standby carries its standby.signal: the copy must recover and promote, not stay a standby.
  await rm(path.join(dataDir, 'standby.signal'), { force: true });
  await writeFile(path.join(dataDir, 'recovery.signal'), '', { mode: 0o600 });
  const restoreCommand = `cp "${walDir.replaceAll('"', '\\"')}/%f" "%p"`;
  const settings = [
    '',
    '# Written by Holdfast: a restored copy never archives into the source archive nor follows the source as a standby.',
    'archive_mode = off',
    "primary_conninfo = ''",
    "primary_slot_name = ''",
    BEGIN,
    `restore_command = ${quoted(restoreCommand)}`,
    ...targetLines(target),
    'recovery_target_inclusive = on',
    "recovery_target_action = 'promote'",
    // The fetched WAL follows the base's timeline only, so replay stays on it.
    "recovery_target_timeline = 'current'",
    END,
    '',
  ];
  await appendFile(path.join(dataDir, 'postgresql.auto.conf'), settings.join('\n'), { mode: 0o600 });
  return notes;
}

/** Removes the recovery settings block once the server is promoted (the WAL folder they name is deleted). */
export async function removeRecoverySettings(dataDir: string): Promise<void> {
  const file = path.join(dataDir, 'postgresql.auto.conf');
  const text = await readFile(file, 'utf8');
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start < 0 || end < start) return;
  await writeFile(file, text.slice(0, start) + text.slice(end + END.length + 1));
}
