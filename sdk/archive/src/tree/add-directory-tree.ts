import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Snapshot } from '../chain/resolve-snapshot.js';
import type { Compression } from '../format/index-schema.js';
import type { ArchiveWriter, EntryMeta } from '../writer/archive-writer.js';
import { IncrementalPlan } from './incremental-plan.js';

/** Options of {@link addDirectoryTree}. */
export interface AddDirectoryTreeOptions {
  /** Overrides the writer's default compression for the tree's files. */
  compression?: Compression;
  /**
   * The previous snapshot of the same tree (resolveSnapshot of the chain so far). Files whose size, mtime and inode
   * did not change become references to the archive holding them, a file found under a new path with the same
   * inode becomes a recorded rename, and paths that are gone are recorded as deletions.
   */
  previous?: Snapshot;
}

/** Counts of what {@link addDirectoryTree} added, and the paths it could not archive (sockets, devices, fifos). */
export interface AddDirectoryTreeSummary {
  files: number;
  directories: number;
  symlinks: number;
  hardlinks: number;
  unchanged: number;
  renamed: number;
  deleted: number;
  skipped: string[];
}

/**
 * Adds a directory tree's contents to a writer, one entry at a time (memory stays flat): directories including
 * empty ones, files with nanosecond mtimes, inode and device (for incremental runs), symlinks, and hard links (a
 * second path to an inode already added becomes a hard link to the first path).
 */
export async function addDirectoryTree(
  writer: ArchiveWriter,
  rootDir: string,
  options: AddDirectoryTreeOptions = {},
): Promise<AddDirectoryTreeSummary> {
  const summary: AddDirectoryTreeSummary = { files: 0, directories: 0, symlinks: 0, hardlinks: 0, unchanged: 0, renamed: 0, deleted: 0, skipped: [] };
  const firstPathOfInode = new Map<string, string>();
  const plan = new IncrementalPlan((path) => join(rootDir, path), options.previous);
  const walk = async (absoluteDir: string, relativeDir: string): Promise<void> => {
    for (const name of (await readdir(absoluteDir)).sort()) {
      const absolute = join(absoluteDir, name);
      const relative = relativeDir ? `${relativeDir}/${name}` : name;
      const stats = await lstat(absolute, { bigint: true });
      plan.visit(relative);
      const meta: EntryMeta = {
        path: relative,
        mode: Number(stats.mode & 0o7777n),
        uid: Number(stats.uid),
        gid: Number(stats.gid),
        mtime: stats.mtimeNs,
        inode: Number(stats.ino),
        device: Number(stats.dev),
      };
      if (stats.isDirectory()) {
        await writer.addDirectory(meta);
        summary.directories += 1;
        await walk(absolute, relative);
      } else if (stats.isSymbolicLink()) {
        await writer.addSymlink(meta, await readlink(absolute));
        summary.symlinks += 1;
      } else if (stats.isFile()) {
        const inodeKey = `${stats.dev}:${stats.ino}`;
        const firstPath = stats.nlink > 1n ? firstPathOfInode.get(inodeKey) : undefined;
        if (firstPath !== undefined) {
          await writer.addHardLink(meta, firstPath);
          summary.hardlinks += 1;
          continue;
        }
        if (stats.nlink > 1n) firstPathOfInode.set(inodeKey, relative);
        const size = Number(stats.size);
        const unchanged = await plan.unchangedEntry(relative, { ...meta, size });
        if (unchanged) {
          await writer.addReference(unchanged.entry, unchanged.entry.archive, relative);
          if (unchanged.renamedFrom !== undefined) {
            writer.recordRename(unchanged.renamedFrom, relative);
            summary.renamed += 1;
          } else summary.unchanged += 1;
          continue;
        }
        const source = createReadStream(absolute, { highWaterMark: 1024 * 1024 });
        const compression = options.compression ? { compression: options.compression } : {};
        await writer.addFile({ ...meta, size, ...compression }, source);
        summary.files += 1;
      } else {
        summary.skipped.push(relative);
      }
    }
  };
  await walk(rootDir, '');
  for (const path of plan.deletedPaths()) {
    writer.recordDeletion(path);
    summary.deleted += 1;
  }
  return summary;
}


