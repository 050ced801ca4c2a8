/** A job's backup format and incremental chain (SPEC "Job"; docs/formats/archive.md). */
export interface ArchiveOptions {
  archiveFormat: 'PLAIN' | 'SEEKABLE';
  /** Null with `fullEveryDays` null: every run is a full backup. */
  fullEveryRuns: number | null;
  fullEveryDays: number | null;
}

/** What a source's adapter declares about archives (`capabilities` of `GET /api/adapters/types`). */
export interface ArchiveCapabilities {
  /** The source can write a Holdfast seekable archive. */
  isSeekable: boolean;
  /** The source walks files (directory-like), so runs can be incremental. */
  hasFileArchive: boolean;
}

/** Ranges the server accepts for the chain limits (plugins/catalog archive-options). */
export const FULL_EVERY_RUNS = { min: 2, max: 1000 } as const;
export const FULL_EVERY_DAYS = { min: 1, max: 3650 } as const;

interface AdapterTypeLike {
  adapterId: string;
  type: string;
  capabilities: Record<string, unknown>;
}

/** The archive capabilities of the source adapter `adapterId` (none when it is unknown or not loaded yet). */
export function archiveCapabilitiesOf(types: readonly AdapterTypeLike[] | undefined, adapterId: string | undefined): ArchiveCapabilities {
  const capabilities = types?.find((type) => type.type === 'database' && type.adapterId === adapterId)?.capabilities;
  return { isSeekable: capabilities?.seekableArchive === true, hasFileArchive: capabilities?.fileArchive === true };
}

/**
 * The options a source can keep: the server refuses a seekable archive from a source that cannot write one and a
 * chain from a database source, so values the form no longer shows are reset rather than sent.
 */
export function fitArchiveOptions(options: ArchiveOptions, capabilities: ArchiveCapabilities): ArchiveOptions {
  const archiveFormat = capabilities.isSeekable ? options.archiveFormat : 'PLAIN';
  const isChainable = archiveFormat === 'SEEKABLE' && capabilities.hasFileArchive;
  return { archiveFormat, fullEveryRuns: isChainable ? options.fullEveryRuns : null, fullEveryDays: isChainable ? options.fullEveryDays : null };
}
