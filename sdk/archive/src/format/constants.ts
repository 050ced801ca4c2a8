/** Archive paths owned by the format itself; member paths may not start with this prefix. */
export const RESERVED_PREFIX = '.holdfast/';
export const MANIFEST_PATH = '.holdfast/manifest.json';
export const INDEX_PATH = '.holdfast/index';
export const TRAILER_PATH = '.holdfast/trailer';
export const DATABASES_PREFIX = '.holdfast/databases/';

/** Trailer member header + its one data block + the two zero blocks that end a tar archive. */
export const TAIL_SIZE = 2048;

/** Uncompressed bytes per part of a chunked member: bounds the writer's memory and the cost of one frame. */
export const DEFAULT_CHUNK_SIZE = 1024 * 1024;

/** Keys this format defines; they travel as JSON in each header's pax `comment` record (see tar-header.ts). */
export const PAX = {
  role: 'HOLDFAST.role',
  kind: 'HOLDFAST.kind',
  database: 'HOLDFAST.database',
  path: 'HOLDFAST.path',
  part: 'HOLDFAST.part',
  isFinal: 'HOLDFAST.final',
  compression: 'HOLDFAST.compression',
  size: 'HOLDFAST.size',
  sha256: 'HOLDFAST.sha256',
} as const;
