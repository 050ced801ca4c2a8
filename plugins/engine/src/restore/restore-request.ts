import { AdapterError, hasControlCharacter, INDEX_SIDECAR_EXTENSION, lineText, normalizeStorageKey, SIDECAR_EXTENSION } from '@holdfast/kernel';
import { z } from 'zod';

// The rules of `POST /api/storage/:id/restore`'s body. Each field is checked here, before a run is queued: a value
// the run would only refuse later (a key outside the storage, a database name that is a path) answers 400 naming the
// field and queues nothing (issue 40: 21 hostile bodies were accepted and queued runs that then failed).

const isBlank = (value: string) => value.trim() === '';

/** A storage key by the kernel's key rules (no `..`, no absolute path, no backslash), naming a backup, not a sidecar. */
const backupFile = lineText({ min: 1, max: 1024 }).superRefine((file, ctx) => {
  // zod runs this after lineText's own check failed too; a control character is already reported, once.
  if (hasControlCharacter(file)) return;
  if (isBlank(file)) return void ctx.addIssue({ code: 'custom', message: 'must name a backup file, not only spaces' });
  try {
    normalizeStorageKey(file);
  } catch (error) {
    if (!(error instanceof AdapterError)) throw error;
    return void ctx.addIssue({ code: 'custom', message: error.message.replace(/^\[[^\]]+\] /, '') });
  }
  if (file.endsWith(SIDECAR_EXTENSION) || file.endsWith(INDEX_SIDECAR_EXTENSION)) {
    ctx.addIssue({ code: 'custom', message: `"${file}" is a metadata sidecar, not a backup` });
  }
});

/**
 * A database name. Sources build file names from it (SQL Server's data files, the download's file name), so a
 * separator or a dot-only name would be a path; no database engine Holdfast restores into needs either.
 */
const databaseName = lineText({ min: 1, max: 255 }).superRefine((name, ctx) => {
  if (isBlank(name)) ctx.addIssue({ code: 'custom', message: 'must be a database name, not only spaces' });
  else if (/[/\\]/.test(name) || name === '.' || name === '..') ctx.addIssue({ code: 'custom', message: `"${name}" is a path, not a database name` });
});

/** `..` segments in a path that is resolved later: refused outright rather than resolved into somewhere else. */
const hasParentSegment = (path: string) => path.split(/[/\\]/).includes('..');

/** An absolute local folder for directory restores. */
const targetFolder = lineText({ min: 1, max: 4096 })
  .regex(/^\//, 'must be an absolute path')
  .refine((path) => !hasParentSegment(path), 'must not contain ".." segments');

/** A file or folder of a seekable archive, as GET /api/storage/:id/archive lists it: relative, inside the archive. */
const archivePath = lineText({ min: 1, max: 4096 }).superRefine((path, ctx) => {
  if (isBlank(path)) ctx.addIssue({ code: 'custom', message: 'must name a file or folder, not only spaces' });
  else if (path.startsWith('/')) ctx.addIssue({ code: 'custom', message: 'must be relative to the archive (as the archive listing shows it), not absolute' });
  else if (hasParentSegment(path)) ctx.addIssue({ code: 'custom', message: 'must not contain ".." segments' });
});

/** The body of `POST /api/storage/:id/restore`, stored on the execution as its request. Unknown fields are refused. */
export const restoreRequestSchema = z
  .strictObject({
    // Like download-url's `file`: a NUL here once failed the run and then its own failure record (issue 10.4).
    file: backupFile.describe('Path of the backup within the storage'),
    targetSourceId: z.string().min(1).max(64).optional().describe('Source configuration to restore into; default: the source recorded in the sidecar'),
    database: databaseName.optional().describe('Target database of a single-database dump'),
    databaseMapping: z.record(databaseName, databaseName).optional().describe('Source database name to target name (multi-database dumps)'),
    targetPath: targetFolder.optional().describe('Directory backups: extract below this folder (created when missing)'),
    restoreToOriginalPaths: z.boolean().optional().describe('Directory backups: put every file back where it was backed up from, overwriting'),
    keepSpecialModes: z
      .boolean()
      .optional()
      .describe('Directory and volume backups: restore setuid, setgid and sticky bits and, with them, the archived owners (Holdfast must run as root); without it those bits are dropped and each such file is named in the warnings'),
    overwrite: z
      .boolean()
      .optional()
      .describe(
        'Replace what is already there: without it (or with false) the restore answers 409 and queues nothing when a target database already exists on the target source (`database`, the `databaseMapping` targets, or, when neither is given, the original names the backup records), when `targetPath` is a folder that is not empty, or when `restoreToOriginalPaths` is set (it writes over the backed-up folders). See GET /api/adapters/{id}/databases for what a source holds',
      ),
    paths: z
      .array(archivePath)
      .min(1)
      .max(1000)
      .optional()
      .describe('Seekable archives: restore only these files or folders (paths as GET /api/storage/:id/archive lists them), read with range reads'),
    privateKey: z
      .string()
      .min(1)
      .max(8192)
      .optional()
      .describe(
        'Backups of a public-key encryption profile: the age private key (AGE-SECRET-KEY-1..., or the content of the age-keygen key file). Used for this restore only, held in memory until the run takes it, never stored or logged; a wrong key answers 400 and queues nothing',
      ),
  })
  .refine((body) => !(body.targetPath && body.restoreToOriginalPaths), { message: 'give either targetPath or restoreToOriginalPaths, not both', path: ['targetPath'] });

/**
 * A stored restore request: never the private key. `identityToken` names the key held in memory for the run
 * (restore/held-identities.ts).
 */
export type RestoreRequest = Omit<z.output<typeof restoreRequestSchema>, 'privateKey'> & { storageId: string; identityToken?: string };
