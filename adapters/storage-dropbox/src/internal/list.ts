import type { StorageObjectInfo } from '@holdfast/sdk';
import type { DropboxApi } from './api.js';
import { DropboxApiError, toAdapterError } from './errors.js';
import { keyOf, listTargetOf } from './paths.js';
import type { DropboxFileMetadata } from './upload.js';

interface ListFolderResult {
  entries: DropboxFileMetadata[];
  cursor: string;
  has_more: boolean;
}

/** Entries per page; Dropbox allows up to 2000 and may return fewer. */
const PAGE_LIMIT = 1000;

/**
 * Every file under `prefix`, following `files/list_folder/continue` until `has_more` is false. A folder that does not
 * exist (nothing was ever stored under the prefix) lists as empty; any other failure (token, scope, network) throws.
 */
export async function* listFiles(api: DropboxApi, root: string, prefix: string, signal?: AbortSignal): AsyncGenerator<StorageObjectInfo> {
  const { folder, keyPrefix } = listTargetOf(root, prefix);
  let page: ListFolderResult;
  try {
    page = await api.rpc<ListFolderResult>('files/list_folder', { path: folder, recursive: true, limit: PAGE_LIMIT, include_deleted: false }, signal);
  } catch (error) {
    if (error instanceof DropboxApiError && error.isNotFound) return;
    throw toAdapterError(error, `cannot list "${prefix}" (folder ${folder || '/'})`);
  }
  for (;;) {
    for (const entry of page.entries) {
      if (entry['.tag'] !== 'file') continue;
      const key = keyOf(root, entry.path_lower, entry.path_display);
      if (key === undefined || !key.startsWith(keyPrefix)) continue;
      yield { key, size: entry.size, modifiedAt: new Date(entry.server_modified) };
    }
    if (!page.has_more) return;
    try {
      page = await api.rpc<ListFolderResult>('files/list_folder/continue', { cursor: page.cursor }, signal);
    } catch (error) {
      throw toAdapterError(error, `listing "${prefix}" failed midway (folder ${folder || '/'})`);
    }
  }
}
