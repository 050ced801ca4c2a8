/** A string literal of the Drive query language: `'...'` with `\` and `'` escaped. */
export function literal(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

export const FOLDER_MIME = 'application/vnd.google-apps.folder';

/** Files (not folders, not trashed) directly in `folderId`, optionally only those named `name`. */
export function filesIn(folderId: string, name?: string): string {
  return [`${literal(folderId)} in parents`, 'trashed = false', `mimeType != ${literal(FOLDER_MIME)}`, ...(name === undefined ? [] : [`name = ${literal(name)}`])].join(' and ');
}

/** The folder named `name` directly in `parentId`. */
export function folderIn(parentId: string, name: string): string {
  return [`${literal(parentId)} in parents`, 'trashed = false', `mimeType = ${literal(FOLDER_MIME)}`, `name = ${literal(name)}`].join(' and ');
}
