/**
 * In-memory index + temp-dir blobs of the Dropbox API FAKE (see dropbox-fake.ts). Paths are case-insensitive and
 * keyed by their lower-cased form as Dropbox's `path_lower`; folders exist explicitly (created by commits, kept when
 * emptied, as in Dropbox).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { appendFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface FakeFile {
  id: string;
  pathDisplay: string;
  size: number;
  serverModified: string;
  blob: string;
}

export interface FakeSession {
  id: string;
  offset: number;
  isClosed: boolean;
  isFinished: boolean;
  blob: string;
}

/** The `.tag: file` metadata Dropbox answers. */
export function fileMetadata(file: FakeFile): Record<string, unknown> {
  return {
    '.tag': 'file',
    name: file.pathDisplay.slice(file.pathDisplay.lastIndexOf('/') + 1),
    id: `id:${file.id}`,
    path_lower: file.pathDisplay.toLowerCase(),
    path_display: file.pathDisplay,
    client_modified: file.serverModified.replace(/\.\d+Z$/, 'Z'),
    server_modified: file.serverModified.replace(/\.\d+Z$/, 'Z'),
    rev: file.id.replace(/-/g, '').slice(0, 16),
    size: file.size,
    is_downloadable: true,
    content_hash: '0'.repeat(64),
  };
}

export class FakeDropboxStore {
  readonly dir = mkdtempSync(join(tmpdir(), 'holdfast-fake-dropbox-'));
  readonly files = new Map<string, FakeFile>();
  readonly folders = new Map<string, string>([['', '']]);
  readonly sessions = new Map<string, FakeSession>();

  async startSession(bytes: Buffer, isClosed: boolean): Promise<FakeSession> {
    const session: FakeSession = { id: `pid_upload_session:${randomUUID()}`, offset: bytes.length, isClosed, isFinished: false, blob: join(this.dir, randomUUID()) };
    await writeFile(session.blob, bytes);
    this.sessions.set(session.id, session);
    return session;
  }

  async append(session: FakeSession, bytes: Buffer): Promise<void> {
    await appendFile(session.blob, bytes);
    session.offset += bytes.length;
  }

  /** Commits a blob to `path` (mode overwrite), creating parent folders; the file appears at once, complete. */
  async commit(path: string, blob: string, size: number): Promise<FakeFile> {
    const target = join(this.dir, randomUUID());
    await rename(blob, target);
    const segments = path.split('/');
    for (let i = 2; i < segments.length; i += 1) {
      const folder = segments.slice(0, i).join('/');
      if (!this.folders.has(folder.toLowerCase())) this.folders.set(folder.toLowerCase(), folder);
    }
    const old = this.files.get(path.toLowerCase());
    const file: FakeFile = { id: randomUUID(), pathDisplay: old?.pathDisplay ?? path, size, serverModified: new Date().toISOString(), blob: target };
    this.files.set(path.toLowerCase(), file);
    if (old) await rm(old.blob, { force: true });
    return file;
  }

  /** Deletes a file, or a folder with everything below it; false when nothing is there. */
  async remove(path: string): Promise<Record<string, unknown> | undefined> {
    const lower = path.toLowerCase();
    const file = this.files.get(lower);
    if (file) {
      this.files.delete(lower);
      await rm(file.blob, { force: true });
      return fileMetadata(file);
    }
    const display = this.folders.get(lower);
    if (display === undefined || lower === '') return undefined;
    for (const [key, child] of [...this.files]) {
      if (key.startsWith(`${lower}/`)) {
        this.files.delete(key);
        await rm(child.blob, { force: true });
      }
    }
    for (const key of [...this.folders.keys()]) if (key === lower || key.startsWith(`${lower}/`)) this.folders.delete(key);
    return { '.tag': 'folder', name: display.slice(display.lastIndexOf('/') + 1), path_lower: lower, path_display: display };
  }

  /** Entries below a folder (files and folders), sorted by path, as `files/list_folder` returns them. */
  entriesBelow(folder: string, isRecursive: boolean): Record<string, unknown>[] {
    const lower = folder.toLowerCase();
    const isBelow = (path: string) => path.startsWith(`${lower}/`) && (isRecursive || !path.slice(lower.length + 1).includes('/'));
    const folders = [...this.folders].filter(([path]) => path !== '' && isBelow(path)).map(([path, display]) => ({
      '.tag': 'folder', name: display.slice(display.lastIndexOf('/') + 1), path_lower: path, path_display: display, id: `id:${path}`,
    }));
    const files = [...this.files].filter(([path]) => isBelow(path)).map(([, file]) => fileMetadata(file));
    return [...folders, ...files].sort((a, b) => String(a.path_lower).localeCompare(String(b.path_lower)));
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
