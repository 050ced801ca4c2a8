import { lstat, open, stat, type FileHandle } from 'node:fs/promises';
import { createArchiveWriter, IncrementalPlan, type ArchiveDumpRequest, type ArchiveWriter, type DumpHandle, type DumpStats, type EntryMeta, type KernelLogger, type Snapshot } from '@holdfast/sdk';
import { aborted, describeFileError, toAdapterError } from './errors.js';
import { rootMember, walkRoots, type ArchiveEntry, type ArchiveRoot } from './walk.js';
import { WarningList } from './warnings.js';

/** Everything one seekable-archive dump needs. */
export interface ArchiveDumpPlan {
  roots: ArchiveRoot[];
  exclude: readonly string[];
  followSymlinks: boolean;
  refusal?: (absolute: string) => Promise<string | undefined>;
  request: ArchiveDumpRequest;
  logger: KernelLogger;
  signal: AbortSignal;
}

const READ_BUFFER_BYTES = 1024 * 1024;

/** Counts the run log reports: what was stored, what an incremental run could reference instead. */
interface ArchiveSummary {
  files: number;
  bytes: number;
  directories: number;
  symlinks: number;
  hardlinks: number;
  unchanged: number;
  renamed: number;
  deleted: number;
}

/**
 * Writes the roots as a Holdfast seekable archive (docs/formats/archive.md) with the same member names as the tar
 * layout (`<index>-<basename>/...`). An incremental run (`request.previous`) stores only files whose size, mtime,
 * inode or device changed; the rest become references into the chain, and renames and deletions are recorded.
 */
export async function startArchiveDump(plan: ArchiveDumpPlan): Promise<DumpHandle> {
  const { request } = plan;
  const writer = createArchiveWriter({
    archiveName: request.archiveName,
    createdAt: request.createdAt,
    chain: request.chain,
    compression: request.compression,
    ...(request.compressionLevel !== undefined ? { compressionLevel: request.compressionLevel } : {}),
  });
  const warnings = new WarningList();
  const stop = new AbortController();
  const onAbort = () => {
    stop.abort();
    writer.destroy(aborted('dump'));
  };
  plan.signal.addEventListener('abort', onAbort, { once: true });
  const locate = archivePathLocator(plan.roots);
  const produce = async (): Promise<DumpStats> => {
    const summary: ArchiveSummary = { files: 0, bytes: 0, directories: 0, symlinks: 0, hardlinks: 0, unchanged: 0, renamed: 0, deleted: 0 };
    // The kernel carries the previous snapshot opaquely; it is the archive library's Snapshot the engine resolved.
    const incremental = new IncrementalPlan(locate, request.previous as Snapshot | undefined);
    const firstPathOfInode = new Map<string, string>();
    const readBuffer = Buffer.allocUnsafeSlow(READ_BUFFER_BYTES);
    const walk = walkRoots(plan.roots, { exclude: plan.exclude, followSymlinks: plan.followSymlinks, refusal: plan.refusal, warnings, logger: plan.logger, signal: stop.signal });
    for await (const entry of walk) {
      incremental.visit(entry.member);
      await addEntry(writer, entry, { incremental, firstPathOfInode, readBuffer, summary, warnings, followSymlinks: plan.followSymlinks });
    }
    for (const path of incremental.deletedPaths()) {
      writer.recordDeletion(path);
      summary.deleted += 1;
    }
    const result = await writer.finish();
    plan.logger.info({ ...summary, entries: result.index.entries.length }, 'seekable archive written');
    return { bytes: result.archiveSize, databases: plan.roots.map((root) => root.path), warnings: warnings.list(), archive: { ...result, summary: { ...summary } } };
  };
  const done = produce().then(
    async (stats) => {
      if (!writer.readableEnded) await new Promise<void>((resolve, reject) => writer.once('end', resolve).once('error', reject).once('close', resolve));
      return stats;
    },
    (error: unknown) => {
      const wrapped = plan.signal.aborted ? aborted('dump') : toAdapterError(error, 'dump failed');
      if (!writer.destroyed) writer.destroy(wrapped);
      throw wrapped;
    },
  );
  done.catch(() => undefined).finally(() => plan.signal.removeEventListener('abort', onAbort));
  // A consumer that goes away early stops the walk; the open file is closed by its read stream's own destroy.
  writer.once('close', () => {
    stop.abort();
  });
  return { stream: writer, done, extension: '.hfa' };
}

interface AddContext {
  incremental: IncrementalPlan;
  /** The one buffer every file of this dump is read through (files are added one after another). */
  readBuffer: Buffer;
  firstPathOfInode: Map<string, string>;
  summary: ArchiveSummary;
  warnings: WarningList;
  followSymlinks: boolean;
}

/** Adds one walked entry: stored, referenced (unchanged or renamed), linked, or skipped with a warning. */
async function addEntry(writer: ArchiveWriter, entry: ArchiveEntry, context: AddContext): Promise<void> {
  const { summary } = context;
  // The walk's stats have millisecond times; the archive keeps nanoseconds, read here with bigint stats. Roots
  // (no `/` in the member) and folders are followed like the walk follows them.
  const follows = context.followSymlinks || entry.kind === 'directory' || !entry.member.includes('/');
  const big = await (follows ? stat : lstat)(entry.absolute, { bigint: true }).catch(() => undefined);
  if (!big) {
    context.warnings.add(`${entry.absolute}: skipped, it vanished while the backup ran`);
    return;
  }
  const meta: EntryMeta = {
    path: entry.member,
    mode: Number(big.mode & 0o7777n),
    uid: Number(big.uid),
    gid: Number(big.gid),
    mtime: big.mtimeNs,
    inode: Number(big.ino),
    device: Number(big.dev),
  };
  if (entry.kind === 'directory') {
    await writer.addDirectory(meta);
    summary.directories += 1;
    return;
  }
  if (entry.kind === 'symlink') {
    await writer.addSymlink(meta, entry.linkTarget ?? '');
    summary.symlinks += 1;
    return;
  }
  const inodeKey = `${big.dev}:${big.ino}`;
  const firstPath = big.nlink > 1n ? context.firstPathOfInode.get(inodeKey) : undefined;
  if (firstPath !== undefined) {
    await writer.addHardLink(meta, firstPath);
    summary.hardlinks += 1;
    return;
  }
  if (big.nlink > 1n) context.firstPathOfInode.set(inodeKey, entry.member);
  const size = Number(big.size);
  const unchanged = await context.incremental.unchangedEntry(entry.member, { ...meta, size });
  if (unchanged) {
    await writer.addReference(unchanged.entry, unchanged.entry.archive, entry.member);
    if (unchanged.renamedFrom !== undefined) {
      writer.recordRename(unchanged.renamedFrom, entry.member);
      summary.renamed += 1;
    } else summary.unchanged += 1;
    return;
  }
  // Opened first: a file that vanished or is unreadable is skipped with a warning before any byte of it is written.
  const handle = await open(entry.absolute, 'r').catch((error: Error) => error);
  if (handle instanceof Error) {
    context.warnings.add(`${entry.absolute}: skipped, ${describeFileError(handle)}`);
    return;
  }
  try {
    await writer.addFile({ ...meta, size, reusesBuffers: true }, readInto(handle, context.readBuffer));
  } finally {
    await handle.close().catch(() => undefined);
  }
  summary.files += 1;
  summary.bytes += size;
}

/**
 * The file's bytes as views of `buffer`, read into again for each chunk: the archive writer copies what it keeps
 * (`reusesBuffers`), so a backup reads every file through one buffer instead of allocating one per read (a 9 GiB
 * sparse file was 9,216 buffers of 1 MiB, all garbage the collector only reclaims once tens of MiB have piled up).
 */
async function* readInto(handle: FileHandle, buffer: Buffer): AsyncGenerator<Buffer> {
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) return;
    yield buffer.subarray(0, bytesRead);
  }
}

/** Maps an archive path (`<index>-<name>/rest`) back to where it lives on disk, for the incremental rename check. */
function archivePathLocator(roots: readonly ArchiveRoot[]): (archivePath: string) => string {
  const byMember = new Map(roots.map((root) => [rootMember(root), root.path]));
  return (archivePath) => {
    const [top = '', ...rest] = archivePath.split('/');
    const root = byMember.get(top);
    // A path of a root no longer configured cannot be on disk under it: a path that never exists says "gone".
    if (root === undefined) return `/nonexistent-holdfast-root/${archivePath}`;
    return rest.length === 0 ? root : `${root}/${rest.join('/')}`;
  };
}
