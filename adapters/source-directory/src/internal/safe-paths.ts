import { posix } from 'node:path';

/**
 * The member name as a safe relative path, or the reason it is refused: absolute names, `..` segments, NUL and
 * empty names could write outside the restore target.
 */
export function safeMemberPath(name: string): { path: string } | { refused: string } {
  const trimmed = name.replace(/\/+$/, '');
  if (trimmed === '' || trimmed === '.') return { refused: 'empty member name' };
  if (trimmed.includes('\0')) return { refused: 'NUL in the member name' };
  if (trimmed.startsWith('/')) return { refused: 'absolute member name' };
  const segments = trimmed.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) return { refused: '".." in the member name' };
  return { path: segments.join('/') };
}

/** Where a symlink at member `path` pointing to `target` resolves, relative to the restore root; refused when outside. */
export function safeLinkTarget(path: string, target: string): { refused: string } | { ok: true } {
  if (target === '') return { refused: 'empty link target' };
  if (target.startsWith('/')) return { refused: `absolute link target "${target}"` };
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  if (resolved === '..' || resolved.startsWith('../')) return { refused: `link target "${target}" points outside the restore folder` };
  return { ok: true };
}
