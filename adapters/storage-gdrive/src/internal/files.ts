import type { DriveApi } from './api.js';
import { FOLDER_MIME, filesIn, folderIn } from './query.js';

/** The fields of a Drive file the adapter reads. */
export interface DriveFile {
  id: string;
  name: string;
  /** Drive answers sizes as decimal strings. */
  size?: string;
  modifiedTime: string;
  mimeType?: string;
}

interface FileList {
  files: DriveFile[];
  nextPageToken?: string;
}

const FILE_FIELDS = 'id,name,size,modifiedTime,mimeType';
const LIST_OPTIONS = { includeItemsFromAllDrives: 'true', spaces: 'drive' };

/** Every page of a `files.list` query, following `nextPageToken`. */
export async function* queryFiles(api: DriveApi, q: string, signal?: AbortSignal, extra: Record<string, string> = {}): AsyncGenerator<DriveFile> {
  let pageToken: string | undefined;
  do {
    const page = await api.json<FileList>('GET', 'files', {
      ...LIST_OPTIONS,
      q,
      fields: `nextPageToken,files(${FILE_FIELDS})`,
      pageSize: '1000',
      ...extra,
      ...(pageToken ? { pageToken } : {}),
    }, undefined, signal);
    yield* page.files;
    pageToken = page.nextPageToken;
  } while (pageToken);
}

/** The newest file named `name` in `folderId` (Drive allows same-named files; the newest wins), or undefined. */
export async function findFile(api: DriveApi, folderId: string, name: string, signal?: AbortSignal): Promise<DriveFile | undefined> {
  const page = await api.json<FileList>('GET', 'files', {
    ...LIST_OPTIONS,
    q: filesIn(folderId, name),
    fields: `files(${FILE_FIELDS})`,
    orderBy: 'modifiedTime desc',
    pageSize: '10',
  }, undefined, signal);
  return page.files[0];
}

/**
 * The id of the folder `path` below `parentId`, walking one `files.list` per segment; missing folders are created
 * when `create` is set, else the answer is undefined.
 */
export async function resolveFolder(api: DriveApi, parentId: string, path: string, create: boolean, signal?: AbortSignal): Promise<string | undefined> {
  let current = parentId;
  for (const name of path === '' ? [] : path.split('/')) {
    const page = await api.json<FileList>('GET', 'files', { ...LIST_OPTIONS, q: folderIn(current, name), fields: 'files(id)', orderBy: 'createdTime', pageSize: '1' }, undefined, signal);
    const found = page.files[0]?.id;
    if (found) {
      current = found;
      continue;
    }
    if (!create) return undefined;
    const created = await api.json<DriveFile>('POST', 'files', { fields: 'id' }, { name, mimeType: FOLDER_MIME, parents: [current] }, signal);
    current = created.id;
  }
  return current;
}
