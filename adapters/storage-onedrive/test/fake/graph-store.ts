/**
 * Items of the Microsoft Graph drive FAKE (see graph-fake.ts): a tree keyed by lower-cased path (OneDrive paths are
 * case-insensitive), folders explicit, file content in a temp dir.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface FakeItem {
  id: string;
  name: string;
  /** Display path without leading "/", "" for the root. */
  path: string;
  isFolder: boolean;
  size: number;
  lastModifiedDateTime: string;
  blob?: string;
}

/** Characters OneDrive refuses in names. */
const INVALID_NAME = /["*:<>?/\\|]|^\s|[\s.]$/;

export function isValidName(name: string): boolean {
  return name !== '' && !INVALID_NAME.test(name);
}

export function driveItem(item: FakeItem, baseUrl: string): Record<string, unknown> {
  return {
    id: item.id,
    name: item.name,
    size: item.size,
    lastModifiedDateTime: item.lastModifiedDateTime,
    parentReference: { driveId: 'fake-drive', path: `/drive/root:/${item.path.split('/').slice(0, -1).join('/')}` },
    ...(item.isFolder ? { folder: { childCount: 0 } } : { file: { mimeType: 'application/octet-stream', hashes: { quickXorHash: 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=' } } }),
    ...(item.isFolder ? {} : { '@microsoft.graph.downloadUrl': `${baseUrl}/download/${item.id}?tempauth=${randomBytes(8).toString('hex')}` }),
  };
}

export class FakeGraphStore {
  readonly dir = mkdtempSync(join(tmpdir(), 'holdfast-fake-onedrive-'));
  readonly items = new Map<string, FakeItem>([['', { id: 'root-id', name: 'root', path: '', isFolder: true, size: 0, lastModifiedDateTime: new Date().toISOString() }]]);

  get(path: string): FakeItem | undefined {
    return this.items.get(path.toLowerCase());
  }

  byId(id: string): FakeItem | undefined {
    return [...this.items.values()].find((item) => item.id === id);
  }

  blobPath(): string {
    return join(this.dir, randomBytes(12).toString('hex'));
  }

  /** Creates missing parent folders of `path`, as path-addressed uploads do; false when a parent is a file. */
  ensureParents(path: string): boolean {
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i += 1) {
      const folder = segments.slice(0, i).join('/');
      const existing = this.get(folder);
      if (existing && !existing.isFolder) return false;
      if (!existing) this.items.set(folder.toLowerCase(), { id: randomBytes(12).toString('hex'), name: segments[i - 1]!, path: folder, isFolder: true, size: 0, lastModifiedDateTime: new Date().toISOString() });
    }
    return true;
  }

  /** Puts a complete file at `path` (replace), the moment OneDrive shows an upload. */
  async commit(path: string, blob: string, size: number): Promise<FakeItem> {
    const target = this.blobPath();
    await rename(blob, target);
    const old = this.get(path);
    const item: FakeItem = { id: old?.id ?? randomBytes(12).toString('hex'), name: old?.name ?? path.slice(path.lastIndexOf('/') + 1), path: old?.path ?? path, isFolder: false, size, lastModifiedDateTime: new Date().toISOString(), blob: target };
    this.items.set(path.toLowerCase(), item);
    if (old?.blob) await rm(old.blob, { force: true });
    return item;
  }

  async remove(path: string): Promise<boolean> {
    const lower = path.toLowerCase();
    if (!this.items.has(lower) || lower === '') return false;
    for (const [key, item] of [...this.items]) {
      if (key === lower || key.startsWith(`${lower}/`)) {
        this.items.delete(key);
        if (item.blob) await rm(item.blob, { force: true });
      }
    }
    return true;
  }

  children(path: string): FakeItem[] {
    const lower = path.toLowerCase();
    return [...this.items.entries()]
      .filter(([key]) => key !== '' && (lower === '' ? !key.includes('/') : key.startsWith(`${lower}/`) && !key.slice(lower.length + 1).includes('/')))
      .map(([, item]) => item)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
