import { lstat } from 'node:fs/promises';
import type { ResolvedEntry, Snapshot } from '../chain/resolve-snapshot.js';
import { toPaxTime, type MtimeInput } from '../format/times.js';

/** A file the previous snapshot already holds, and the path it had there when it was renamed since. */
export interface UnchangedFile {
  entry: ResolvedEntry;
  renamedFrom?: string;
}

/** The stat fields that decide whether a file changed: size, mtime and inode (as the issue asks). */
export interface FileIdentity {
  size: number;
  mtime?: MtimeInput;
  inode?: number;
  device?: number;
  /** When given, a changed mode or owner counts as a change too (a chmod leaves size and mtime alone). */
  mode?: number;
  uid?: number;
  gid?: number;
}

/** Decides, file by file, what an incremental run can reference instead of storing again. */
export class IncrementalPlan {
  private readonly byPath: Map<string, ResolvedEntry>;
  private readonly byInode = new Map<string, ResolvedEntry>();
  private readonly visited = new Set<string>();
  private readonly renamedFrom = new Set<string>();

  /**
   * `locate` maps an archive path to where it lives on disk now (a rename is only a rename when the old path is
   * gone); `previous` is the chain's snapshot so far, absent for a full backup.
   */
  constructor(
    private readonly locate: (archivePath: string) => string,
    previous: Snapshot | undefined,
  ) {
    const files = (previous?.entries ?? []).filter((entry) => entry.kind === 'file');
    this.byPath = new Map((previous?.entries ?? []).map((entry) => [entry.path, entry]));
    for (const entry of files) if (entry.inode !== undefined) this.byInode.set(`${entry.device}:${entry.inode}`, entry);
  }

  /** Marks a path as present in the current tree (only paths of the previous snapshot are kept: a full run keeps none). */
  visit(path: string): void {
    if (this.byPath.has(path)) this.visited.add(path);
  }

  /** The previous entry this file can reference, or undefined when it must be stored. */
  async unchangedEntry(path: string, identity: FileIdentity): Promise<UnchangedFile | undefined> {
    const samePath = this.byPath.get(path);
    if (samePath?.kind === 'file' && this.isSame(samePath, identity)) return { entry: samePath };
    const moved = this.byInode.get(`${identity.device}:${identity.inode}`);
    if (!moved || moved.path === path || !this.isSame(moved, identity) || this.renamedFrom.has(moved.path)) return undefined;
    // Same inode under a new name is a rename only if the old name is gone (otherwise it is a new hard link).
    const old = await lstat(this.locate(moved.path)).catch(() => undefined);
    if (old && old.ino === identity.inode) return undefined;
    this.renamedFrom.add(moved.path);
    return { entry: moved, renamedFrom: moved.path };
  }

  /** Paths of the previous snapshot that are neither in the current tree nor renamed. */
  deletedPaths(): string[] {
    return [...this.byPath.keys()].filter((path) => !this.visited.has(path) && !this.renamedFrom.has(path));
  }

  private isSame(entry: ResolvedEntry, identity: FileIdentity): boolean {
    return (
      entry.size === identity.size &&
      entry.mtime === (identity.mtime === undefined ? undefined : toPaxTime(identity.mtime)) &&
      entry.inode === identity.inode &&
      entry.device === identity.device &&
      (identity.mode === undefined || entry.mode === (identity.mode & 0o7777)) &&
      (identity.uid === undefined || entry.uid === identity.uid) &&
      (identity.gid === undefined || entry.gid === identity.gid)
    );
  }
}
