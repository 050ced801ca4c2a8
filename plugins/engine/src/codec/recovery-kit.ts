import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { assertProfileKey, keyFingerprint } from './encryption/format.js';

/** One file of the recovery kit, ready to be put into a zip or tar. */
export interface RecoveryKitFile {
  name: string;
  content: string;
  /** Suggested permissions: the key file is private, the script executable. */
  mode: number;
}

/** Options of {@link buildRecoveryKit}. */
export interface RecoveryKitOptions {
  /** The encryption profile's 32-byte key; it goes into the kit's key file. */
  key: Uint8Array;
  /** Shown in the key file so people know which profile it belongs to. */
  profileName?: string;
  signal?: AbortSignal;
}

/** File names inside the kit; the kit README refers to them. */
export const RECOVERY_KIT_FILES = {
  script: 'holdfast-decrypt.mjs',
  /**
   * Modules the script imports from its own folder (decryption, archive reading, chains, restoring, containment, and
   * the point-in-time restore of a PostgreSQL base backup and its WAL: `pitr`; of one MySQL/MariaDB database from a
   * logical base and its binary log: `mysql-pitr`).
   */
  modules: [
    'hfenc.mjs',
    'archive-reader.mjs',
    'archive-chain.mjs',
    'archive-extract.mjs',
    'restore-target.mjs',
    'containment.mjs',
    'decompress.mjs',
    'tar-unpack.mjs',
    'pitr-restore.mjs',
    'pitr-wal.mjs',
    'pitr-settings.mjs',
    'pitr-server.mjs',
    'mysql-pitr.mjs',
    'mysql-base.mjs',
    'mysql-binlog.mjs',
    'mysql-replay-watch.mjs',
    'mysql-server.mjs',
  ],
  readme: 'README.md',
  key: 'holdfast-key.txt',
} as const;

// The kit's files are the @holdfast/recovery-kit package's kit/ folder, found by package name (the same from src/ in
// tests, dist/ in the built package and the container image's staged node_modules).
const KIT_DIRECTORY = new URL('kit/', pathToFileURL(createRequire(import.meta.url).resolve('@holdfast/recovery-kit/package.json')));

/**
 * The files of a recovery kit for one profile key: the script and its modules, its README and a key file. The caller
 * packs them (zip/tar) and must treat the result as secret, since it contains the key.
 */
export async function buildRecoveryKit(options: RecoveryKitOptions): Promise<RecoveryKitFile[]> {
  const key = assertProfileKey(options.key);
  const read = (name: string) => readFile(new URL(name, KIT_DIRECTORY), { encoding: 'utf8', signal: options.signal });
  const [script, readme, ...modules] = await Promise.all([
    read(RECOVERY_KIT_FILES.script),
    read(RECOVERY_KIT_FILES.readme),
    ...RECOVERY_KIT_FILES.modules.map(read),
  ]);
  return [
    { name: RECOVERY_KIT_FILES.script, content: script, mode: 0o755 },
    ...RECOVERY_KIT_FILES.modules.map((name, position) => ({ name, content: modules[position] ?? '', mode: 0o644 })),
    { name: RECOVERY_KIT_FILES.readme, content: readme, mode: 0o644 },
    { name: RECOVERY_KIT_FILES.key, content: keyFileText(key, options.profileName), mode: 0o600 },
  ];
}

function keyFileText(key: Buffer, profileName: string | undefined): string {
  // A profile name is user input: keep it on its comment line so it can never be read as key material.
  const label = profileName?.replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ').trim();
  return [
    '# Holdfast encryption key. Keep this file secret: with it, anyone can read the backups made with this key.',
    ...(label ? [`# Encryption profile: ${label}`] : []),
    `# Key fingerprint: ${keyFingerprint(key).toString('hex')}`,
    `# Use: node ${RECOVERY_KIT_FILES.script} --key-file ${RECOVERY_KIT_FILES.key} --out <output> <backup-file>`,
    `# Archives (.hfa.enc): node ${RECOVERY_KIT_FILES.script} extract --key-file ${RECOVERY_KIT_FILES.key} <archive> <output-folder>`,
    `# PostgreSQL point in time: node ${RECOVERY_KIT_FILES.script} pitr --key-file ${RECOVERY_KIT_FILES.key} --base <base backup> --wal <folder> --target-time <time> --out <data directory>`,
    `# MySQL/MariaDB point in time: node ${RECOVERY_KIT_FILES.script} mysql-pitr --key-file ${RECOVERY_KIT_FILES.key} --base <base backup> --binlogs <folder> --database <name> --into <new name> --target-time <time> --host <host> --user <user> --password-file <file>`,
    key.toString('hex'),
    '',
  ].join('\n');
}
