import { normalizeStorageKey, normalizeStoragePrefix, type StorageObjectInfo } from '@holdfast/sdk';
import { itemPath, type GraphApi } from './api.js';
import { GraphApiError, ONEDRIVE_ORIGIN, toAdapterError } from './errors.js';
import type { DriveItem } from './upload.js';

interface ChildrenPage {
  value: DriveItem[];
  '@odata.nextLink'?: string;
}

const CHILDREN_QUERY = '$top=1000&$select=id,name,size,lastModifiedDateTime,file,folder';

/** The item path segments of a storage key under the root folder. */
export function segmentsOf(rootSegments: readonly string[], key: string): string[] {
  return [...rootSegments, ...normalizeStorageKey(key, ONEDRIVE_ORIGIN).split('/')];
}

/**
 * Every file under `prefix`: the deepest folder the prefix names is walked breadth-first, each folder's children
 * paged through `@odata.nextLink`. A folder that does not exist lists as empty (nothing was stored there); any other
 * failure (token, permission, network) throws.
 */
export async function* listFiles(api: GraphApi, rootSegments: readonly string[], prefix: string, signal?: AbortSignal): AsyncGenerator<StorageObjectInfo> {
  const keyPrefix = normalizeStoragePrefix(prefix, ONEDRIVE_ORIGIN);
  const cut = keyPrefix.lastIndexOf('/');
  const start = cut === -1 ? [] : keyPrefix.slice(0, cut).split('/');
  const queue: string[][] = [start];
  while (queue.length > 0) {
    const relative = queue.shift()!;
    let url: string | undefined = `${itemPath([...rootSegments, ...relative])}/children?${CHILDREN_QUERY}`;
    while (url) {
      let page: ChildrenPage;
      try {
        page = await api.json<ChildrenPage>('GET', url, undefined, signal);
      } catch (error) {
        if (error instanceof GraphApiError && error.isNotFound && relative === start) return;
        throw toAdapterError(error, `cannot list "${prefix}" (folder ${[...rootSegments, ...relative].join('/') || '/'})`);
      }
      for (const item of page.value) {
        const parts = [...relative, item.name];
        const key = parts.join('/');
        if (item.folder) {
          if (`${key}/`.startsWith(keyPrefix) || keyPrefix.startsWith(`${key}/`)) queue.push(parts);
          continue;
        }
        if (!item.file || !key.startsWith(keyPrefix) || !isValidKey(key)) continue;
        yield { key, size: item.size ?? 0, modifiedAt: new Date(item.lastModifiedDateTime) };
      }
      url = page['@odata.nextLink'];
    }
  }
}

function isValidKey(key: string): boolean {
  try {
    normalizeStorageKey(key, ONEDRIVE_ORIGIN);
    return true;
  } catch {
    return false;
  }
}
