/**
 * Files of the Google Drive API FAKE (see drive-fake.ts): metadata in memory, content in a temp dir, and the subset
 * of the Drive query language the adapter sends (`'<id>' in parents`, `name = '..'`, `mimeType = / != '..'`,
 * `trashed = false`, joined by `and`). Anything else is answered 400 "Invalid Value", as Drive does for a bad `q`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface FakeDriveFile {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  size: number;
  createdTime: string;
  modifiedTime: string;
  trashed: boolean;
  blob?: string;
}

export const FOLDER_MIME = 'application/vnd.google-apps.folder';

/** A Drive-style opaque id. */
export function newId(): string {
  return randomBytes(21).toString('base64url');
}

type Clause = (file: FakeDriveFile) => boolean;

function unquote(text: string): string {
  return text.slice(1, -1).replace(/\\(.)/g, '$1');
}

/** Splits a query at the ` and ` outside string literals. */
function splitAnd(q: string): string[] {
  const parts: string[] = [];
  let current = '';
  let isQuoted = false;
  for (let i = 0; i < q.length; i += 1) {
    const char = q[i]!;
    if (isQuoted && char === '\\') {
      current += char + (q[i + 1] ?? '');
      i += 1;
      continue;
    }
    if (char === "'") isQuoted = !isQuoted;
    if (!isQuoted && q.startsWith(' and ', i)) {
      parts.push(current.trim());
      current = '';
      i += 4;
      continue;
    }
    current += char;
  }
  parts.push(current.trim());
  return parts.filter(Boolean);
}

/** Parses `q`; undefined when it uses anything beyond the supported subset. */
export function parseQuery(q: string): Clause | undefined {
  const literal = String.raw`'(?:[^'\\]|\\.)*'`;
  const parts = splitAnd(q);
  const clauses: Clause[] = [];
  for (const part of parts) {
    let match: RegExpExecArray | null;
    if ((match = new RegExp(`^(${literal}) in parents$`).exec(part))) {
      const id = unquote(match[1]!);
      clauses.push((file) => file.parents.includes(id));
    } else if ((match = new RegExp(`^name = (${literal})$`).exec(part))) {
      const name = unquote(match[1]!);
      clauses.push((file) => file.name === name);
    } else if ((match = new RegExp(`^mimeType (=|!=) (${literal})$`).exec(part))) {
      const [isEqual, mime] = [match[1] === '=', unquote(match[2]!)];
      clauses.push((file) => (file.mimeType === mime) === isEqual);
    } else if (/^trashed = false$/.test(part)) {
      clauses.push((file) => !file.trashed);
    } else {
      return undefined;
    }
  }
  return (file) => clauses.every((clause) => clause(file));
}

export class FakeDriveStore {
  readonly dir = mkdtempSync(join(tmpdir(), 'holdfast-fake-gdrive-'));
  readonly files = new Map<string, FakeDriveFile>();

  constructor() {
    const now = new Date().toISOString();
    this.files.set('root', { id: 'root', name: 'My Drive', mimeType: FOLDER_MIME, parents: [], size: 0, createdTime: now, modifiedTime: now, trashed: false });
  }

  blobPath(): string {
    return join(this.dir, newId());
  }

  create(fields: { name: string; mimeType?: string; parents?: string[] }, content?: { blob: string; size: number }): FakeDriveFile {
    const now = new Date().toISOString();
    const file: FakeDriveFile = {
      id: newId(),
      name: fields.name,
      mimeType: fields.mimeType ?? 'application/octet-stream',
      parents: fields.parents ?? ['root'],
      size: content?.size ?? 0,
      createdTime: now,
      modifiedTime: now,
      trashed: false,
      blob: content?.blob,
    };
    this.files.set(file.id, file);
    return file;
  }

  async replaceContent(file: FakeDriveFile, content: { blob: string; size: number }): Promise<void> {
    const old = file.blob;
    Object.assign(file, { blob: content.blob, size: content.size, modifiedTime: new Date().toISOString() });
    if (old) await rm(old, { force: true });
  }

  async remove(id: string): Promise<boolean> {
    const file = this.files.get(id);
    if (!file || id === 'root') return false;
    this.files.delete(id);
    if (file.blob) await rm(file.blob, { force: true });
    for (const child of [...this.files.values()]) if (child.parents.includes(id)) await this.remove(child.id);
    return true;
  }

  /** Visible files (not the root) in a stable order: `orderBy` `modifiedTime desc`, `createdTime`, or by name. */
  query(clause: Clause, orderBy: string | undefined): FakeDriveFile[] {
    const found = [...this.files.values()].filter((file) => file.id !== 'root' && clause(file));
    if (orderBy === 'modifiedTime desc') return found.sort((a, b) => b.modifiedTime.localeCompare(a.modifiedTime));
    if (orderBy === 'createdTime') return found.sort((a, b) => a.createdTime.localeCompare(b.createdTime));
    return found.sort((a, b) => a.name.localeCompare(b.name));
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
