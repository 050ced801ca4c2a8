import { ArchiveUnsafePathError } from '../errors.js';

/**
 * Normalises a member path to the form the index stores: relative, "/"-separated, no "." segments, no trailing
 * slash. Absolute paths, ".." segments and NUL bytes are refused: a path like that would let an archive write
 * outside the directory it is extracted into.
 */
export function normalizeArchivePath(path: string): string {
  if (typeof path !== 'string' || path.length === 0) throw new ArchiveUnsafePathError('empty member path');
  if (path.includes('\0')) throw new ArchiveUnsafePathError(`member path contains a NUL byte: ${JSON.stringify(path)}`);
  if (path.startsWith('/')) throw new ArchiveUnsafePathError(`absolute member path ${JSON.stringify(path)}`);
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw new ArchiveUnsafePathError(`member path ${JSON.stringify(path)} contains ".."`);
  if (segments.length === 0) throw new ArchiveUnsafePathError(`member path ${JSON.stringify(path)} names no entry`);
  const normal = segments.join('/');
  // The caller's own string when it was already normal, so an archive of 50,000 files keeps one copy of each path.
  return normal === path ? path : normal;
}
