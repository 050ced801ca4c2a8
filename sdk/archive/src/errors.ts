/** Stable error codes, so callers (the engine, the API) can map a failure to a status without parsing messages. */
export type ArchiveErrorCode =
  | 'ARCHIVE_FORMAT'
  | 'ARCHIVE_INTEGRITY'
  | 'ARCHIVE_UNSAFE_PATH'
  | 'ARCHIVE_INVALID_INPUT'
  | 'ARCHIVE_CHAIN'
  | 'ARCHIVE_UNSUPPORTED';

/** Base class of every error this package throws on purpose. */
export class ArchiveError extends Error {
  constructor(
    readonly code: ArchiveErrorCode,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The bytes are not a well-formed Holdfast archive (bad header, truncated data, unknown version). */
export class ArchiveFormatError extends ArchiveError {
  constructor(message: string) {
    super('ARCHIVE_FORMAT', `archive format error: ${message}`);
  }
}

/** A checksum did not match: the index, the trailer or a member's content was changed or corrupted. */
export class ArchiveIntegrityError extends ArchiveError {
  constructor(message: string) {
    super('ARCHIVE_INTEGRITY', `archive integrity error: ${message}`);
  }
}

/** A member path would escape the extraction directory (absolute, "..", or through a symlink). */
export class ArchiveUnsafePathError extends ArchiveError {
  constructor(message: string) {
    super('ARCHIVE_UNSAFE_PATH', `unsafe archive path: ${message}`);
  }
}

/** The caller passed something the writer or reader cannot use (bad meta, reserved path, wrong options). */
export class ArchiveInputError extends ArchiveError {
  constructor(message: string) {
    super('ARCHIVE_INVALID_INPUT', message);
  }
}

/** A chain of incremental indexes is incomplete or inconsistent. */
export class ArchiveChainError extends ArchiveError {
  constructor(message: string) {
    super('ARCHIVE_CHAIN', `archive chain error: ${message}`);
  }
}
