import { z } from 'zod';

/** Compression of one member's data; recorded per member so one archive can mix them. */
export const compressionSchema = z.enum(['none', 'gzip', 'zstd']);
/** See {@link compressionSchema}. */
export type Compression = z.output<typeof compressionSchema>;

/** What a member is. `database-dump` carries one database's dump, named in `database`. */
export const entryKindSchema = z.enum(['file', 'directory', 'symlink', 'hardlink', 'database-dump']);
/** See {@link entryKindSchema}. */
export type EntryKind = z.output<typeof entryKindSchema>;

const mtimeSchema = z.string().regex(/^-?\d+(\.\d{1,9})?$/, 'mtime must be decimal seconds like "1700000000.123456789"');

/** One member of a snapshot as the index describes it. */
export const indexEntrySchema = z.object({
  path: z.string().min(1),
  kind: entryKindSchema,
  mode: z.number().int().min(0).max(0o7777),
  uid: z.number().int().min(0),
  gid: z.number().int().min(0),
  uname: z.string().optional(),
  gname: z.string().optional(),
  mtime: mtimeSchema,
  /** Uncompressed size of a file or dump. */
  size: z.number().int().min(0).optional(),
  /** Symlink target, or the archive path a hard link points at. */
  target: z.string().optional(),
  database: z.string().optional(),
  compression: compressionSchema.optional(),
  /** Byte range of the member (its first header to the end of its last data block) in `archive`. */
  offset: z.number().int().min(0),
  length: z.number().int().min(0),
  /** Hex SHA-256 of the uncompressed content (files and dumps). */
  sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  /** Name of the earlier archive of the chain that holds the data; absent when this archive holds it. */
  archive: z.string().min(1).optional(),
  /** Inode and device at backup time, so the next incremental run can tell an unchanged file. */
  inode: z.number().int().min(0).optional(),
  device: z.number().int().min(0).optional(),
  /** The source file grew or shrank while it was read; the stored content was cut or zero-padded to `size`. */
  isSizeChanged: z.boolean().optional(),
});
/** See {@link indexEntrySchema}. */
export type IndexEntry = z.output<typeof indexEntrySchema>;

/** Where an archive sits in an incremental chain. Sequence 0 is the full backup. */
export const chainSchema = z.object({
  id: z.string().min(1),
  sequence: z.number().int().min(0),
  /** Names of the earlier archives of the chain, oldest first (empty for the full backup). */
  baseArchives: z.array(z.string().min(1)),
});
/** See {@link chainSchema}. */
export type ChainInfo = z.output<typeof chainSchema>;

/** The index: the whole snapshot this archive (with its chain) describes. */
export const archiveIndexSchema = z.object({
  format: z.literal('holdfast-archive-index'),
  version: z.literal(1),
  archiveName: z.string().min(1).optional(),
  createdAt: z.string(),
  chain: chainSchema.nullable(),
  entries: z.array(indexEntrySchema),
  /** Paths of the previous snapshot that this one no longer has. */
  deletions: z.array(z.string()),
  renames: z.array(z.object({ from: z.string(), to: z.string() })),
});
/** See {@link archiveIndexSchema}. */
export type ArchiveIndex = z.output<typeof archiveIndexSchema>;

/** The manifest: the first member, written before any data, with what is known at the start. */
export const manifestSchema = z.object({
  format: z.literal('holdfast-archive'),
  version: z.literal(1),
  archiveName: z.string().min(1).optional(),
  createdAt: z.string(),
  chain: chainSchema.nullable(),
  defaultCompression: compressionSchema,
  isIndexSealed: z.boolean(),
  metadata: z.record(z.string(), z.string()),
});
/** See {@link manifestSchema}. */
export type ArchiveManifest = z.output<typeof manifestSchema>;
