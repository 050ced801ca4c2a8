import { chmod, chown, lchown, lstat, lutimes, symlink, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import tar from 'tar-stream';
import { AdapterError, containedPath, RestoreContainment, RestoreStaging, type ContainedKind, type RestoreResult } from '@holdfast/sdk';
import { DIRECTORY_ORIGIN, abandonInput, aborted, errnoOf, refusedReplacing, toAdapterError } from './errors.js';
import { locateMember, type MemberLocation, type RestoreDestination } from './restore-destination.js';
import { clearForFile, ParentCheck, writeFileEntry, writeFolderEntry, writeHardLink, type Header, type Ownership } from './tar-entry.js';
import { WarningList } from './warnings.js';

/** What a symlink carries until it is created at the end. */
interface PendingLink {
  name: string;
  mtime: Date;
  uid: number;
  gid: number;
}

/** Folder modes and times are applied last: creating children changes a folder's mtime, and 0555 would block them. */
interface PendingFolder {
  path: string;
  mode: number;
  mtime: Date;
  uid: number;
  gid: number;
}

/** One destination root: where it is staged and the containment rule in its coordinates. */
interface StagedRoot {
  staging: string;
  containment: RestoreContainment<PendingLink>;
}

// The restore yields to the event loop after this long: small files are written with synchronous calls, and with the
// input already decoded nothing else (timers, HTTP requests, the run's progress) would run between two entries.
const YIELD_AFTER_MS = 2;

const KINDS: Readonly<Record<string, ContainedKind>> = {
  file: 'file',
  'contiguous-file': 'file',
  directory: 'directory',
  symlink: 'symlink',
  link: 'hardlink',
  'character-device': 'device',
  'block-device': 'device',
  fifo: 'fifo',
};

/** Options of {@link restoreArchive}. */
export interface TarRestoreOptions {
  /** Restore setuid/setgid/sticky bits and, with them, owners (the caller checked that Holdfast runs as root). */
  keepSpecialModes: boolean;
  /**
   * `RestoreOptions.overwrite === false`: a file (or anything but a folder merged into a folder) that exists where the
   * staged tree would go, when it is moved into place, fails the restore, leaving the target as it was. @default false
   */
  refuseReplacing?: boolean;
  /**
   * Awaited after the whole archive was staged and before anything is moved into place: the engine's verdict on the
   * bytes (RestoreOptions.decodedInput.verified). A rejection discards the staging, leaving the targets as they were.
   */
  beforeCommit?: () => Promise<void>;
  /** Synchronous writes for large files too: only in the extractor's own process (restore-child.ts). */
  blockingWrites?: boolean;
}

/** One tar restore: members staged under the containment rule, then moved into place (see {@link restoreArchive}). */
class TarRestore {
  readonly warnings = new WarningList();
  private readonly staging = new RestoreStaging();
  private readonly roots = new Map<string, StagedRoot>();
  private readonly folders: PendingFolder[] = [];
  private readonly restoredFolders = new Set<string>();
  private readonly parents = new ParentCheck();
  private readonly ownership: Ownership;

  constructor(
    private readonly destination: RestoreDestination,
    private readonly signal: AbortSignal,
    private readonly options: TarRestoreOptions,
  ) {
    this.ownership = { isRestored: options.keepSpecialModes };
  }

  /** Stages the folder target before the first member, so an empty or unreadable archive still fails cleanly. */
  async start(): Promise<void> {
    if (this.destination.kind === 'folder') await this.rootFor(this.destination.path);
  }

  async entry(header: Header, body: Readable): Promise<void> {
    const name = header.name;
    const member = containedPath(name);
    const location = 'refused' in member ? member : this.locate(member.path, header.type === 'directory');
    if ('refused' in location) return this.warnings.add(`${name}: refused, ${location.refused}`);
    const root = await this.rootFor(location.root);
    const path = location.relative === '' ? root.staging : join(root.staging, location.relative);
    if (location.relative === '') {
      if (header.type !== 'directory') return this.warnings.add(`${name}: refused, the root of a configured folder must be a folder`);
      const { mode, note } = root.containment.modeFor(header.mode ?? 0o755, 'directory');
      if (note) this.warnings.add(`${name}: ${note}`);
      return this.folder(path, { ...header, mode });
    }
    const kind = KINDS[String(header.type)] ?? 'other';
    if (kind === 'hardlink') return this.hardLink(name, location, path, header);
    const payload = { name, mtime: header.mtime ?? new Date(), uid: header.uid ?? 0, gid: header.gid ?? 0 };
    const verdict = root.containment.admit({ path: location.relative, kind, mode: header.mode ?? 0o644, ...(kind === 'symlink' ? { target: header.linkname ?? '', payload } : {}) });
    if ('refused' in verdict) return this.warnings.add(`${name}: ${kind === 'symlink' ? 'symlink refused' : 'refused'}, ${verdict.refused}`);
    if (verdict.note) this.warnings.add(`${name}: ${verdict.note}`);
    if (kind === 'symlink') return;
    if (!(await this.parents.ensure(path))) return this.warnings.add(`${name}: refused, a parent folder is a symlink`);
    if (kind === 'directory') return this.folder(path, { ...header, mode: verdict.mode });
    await writeFileEntry({ path, mode: verdict.mode, header, body, parents: this.parents, ownership: this.ownership, signal: this.signal, blocking: this.options.blockingWrites === true });
  }

  /** Creates the symlinks that stay inside, applies folder metadata, and moves everything into place. */
  async finish(): Promise<void> {
    for (const root of this.roots.values()) await this.createSymlinks(root);
    for (const folder of this.folders.reverse()) {
      if (this.ownership.isRestored) await chown(folder.path, folder.uid, folder.gid);
      await chmod(folder.path, folder.mode);
      await utimes(folder.path, folder.mtime, folder.mtime);
    }
    const problems = await this.staging
      .commit({ isRestoredDirectory: (path) => this.restoredFolders.has(path), restoreOwnership: this.ownership.isRestored, refuseReplacing: this.options.refuseReplacing === true })
      .catch(refusedReplacing);
    for (const problem of problems) this.warnings.add(problem);
  }

  /** After a failure: removes the staging (the targets stay as they were; every write was awaited). */
  async abandon(): Promise<void> {
    await this.staging.discard();
  }

  private locate(memberPath: string, isDirectory: boolean): MemberLocation | { refused: string } {
    return locateMember(this.destination, memberPath, isDirectory, this.destination.kind === 'folder' ? this.destination.path : '');
  }

  private async rootFor(root: string): Promise<StagedRoot> {
    let staged = this.roots.get(root);
    if (!staged) {
      staged = { staging: await this.staging.folderFor(root), containment: new RestoreContainment<PendingLink>({ keepSpecialModes: this.options.keepSpecialModes }) };
      this.roots.set(root, staged);
    }
    return staged;
  }

  /** `header.mode` is the one the containment rule allows. */
  private async folder(path: string, header: Header): Promise<void> {
    await writeFolderEntry(path);
    this.folders.push({ path, mode: header.mode as number, mtime: header.mtime ?? new Date(), uid: header.uid ?? 0, gid: header.gid ?? 0 });
    this.restoredFolders.add(path);
  }

  // A hard link must point at a file this restore wrote, reached without passing a symlink of the archive.
  private async hardLink(name: string, location: MemberLocation, path: string, header: Header): Promise<void> {
    const refuse = (reason: string) => this.warnings.add(`${name}: hard link refused, ${reason}`);
    const targetMember = containedPath(header.linkname ?? '');
    const targetLocation = 'refused' in targetMember ? targetMember : this.locate(targetMember.path, false);
    if ('refused' in targetLocation) return refuse(`its link target: ${targetLocation.refused}`);
    const root = await this.rootFor(location.root);
    const targetRoot = await this.rootFor(targetLocation.root);
    const payload = { name, mtime: header.mtime ?? new Date(), uid: header.uid ?? 0, gid: header.gid ?? 0 };
    let linkTarget: string;
    if (targetRoot === root) {
      const verdict = root.containment.admit({ path: location.relative, kind: 'hardlink', target: targetLocation.relative, payload });
      if ('refused' in verdict) return refuse(verdict.refused);
      // A hard link to a symlink of the archive is created with the symlinks, as a second symlink.
      if (verdict.becameSymlink) return;
      linkTarget = verdict.linkTarget as string;
    } else {
      // Across roots (original paths): the target is checked in its own root's coordinates; a symlink there is not
      // copied, since its target means something else in this root.
      const checked = targetRoot.containment.linkTarget(targetLocation.relative);
      if ('refused' in checked) return refuse(checked.refused);
      if (checked.symlinkTarget !== undefined) return refuse(`its link target "${header.linkname}" is a symlink in another configured path`);
      const verdict = root.containment.admit({ path: location.relative, kind: 'file' });
      if ('refused' in verdict) return refuse(verdict.refused);
      linkTarget = checked.path;
    }
    if (!(await this.parents.ensure(path))) return refuse('a parent folder is a symlink');
    if (!(await writeHardLink(path, join(targetRoot.staging, linkTarget), this.parents))) {
      refuse(`its link target "${header.linkname}" was not restored as a file`);
    }
  }

  private async createSymlinks(root: StagedRoot): Promise<void> {
    // Something the rule did not see in the way (cannot happen in a fresh staging folder; checked all the same): the
    // link is withdrawn and the others resolved through what is really there.
    for (const path of root.containment.symlinkPaths()) {
      if ((await lstat(join(root.staging, path)).catch(() => undefined))?.isDirectory()) root.containment.withdraw(path);
    }
    const { accepted, refused } = root.containment.settle();
    for (const link of refused) this.warnings.add(`${link.payload?.name ?? link.path}: symlink refused, ${link.reason}`);
    for (const { path, target, payload } of accepted) {
      const absolute = join(root.staging, path);
      const link = payload as PendingLink;
      if (!(await this.parents.ensure(absolute))) {
        this.warnings.add(`${link.name}: symlink refused, a parent folder is a symlink`);
        continue;
      }
      await clearForFile(absolute, this.parents);
      await symlink(target, absolute);
      if (this.ownership.isRestored) await lchown(absolute, link.uid, link.gid);
      await lutimes(absolute, link.mtime, link.mtime);
    }
  }
}

/** Feeds the input into the extractor; resolves with the input's error (a checksum gate, a truncated stream), if any. */
async function feed(input: Readable, extract: tar.Extract, signal: AbortSignal): Promise<unknown> {
  try {
    for await (const chunk of input) {
      if (signal.aborted) throw aborted('restore');
      if (!extract.write(chunk as Buffer)) await new Promise((resolve) => extract.once('drain', resolve));
    }
    extract.end();
    return undefined;
  } catch (error) {
    extract.destroy(error as Error);
    return error;
  }
}

/**
 * Extracts a tar stream below a folder, or each archived root back to its original path. The members go into a
 * staging folder inside each target under the containment rule (docs/security.md): member names that are absolute
 * or hold `..`, anything below a symlink of the archive, symlinks that resolve outside (through the archive's other
 * links too), hard links to anything but a file this restore wrote, devices and FIFOs are refused with a warning;
 * setuid/setgid/sticky bits are dropped with a warning unless `keepSpecialModes` (which restores owners too).
 * Modes and mtimes are restored. Only when the whole input was read without error (the engine's checksum gate
 * included) is the staged tree moved into place; a failed restore leaves the targets as they were.
 */
export async function restoreArchive(input: Readable, destination: RestoreDestination, signal: AbortSignal, options: TarRestoreOptions): Promise<RestoreResult> {
  const where = destination.kind === 'folder' ? destination.path : 'the original paths';
  const run = new TarRestore(destination, signal, options);
  const extract = tar.extract();
  let feeding: Promise<unknown> | undefined;
  try {
    await run.start();
    feeding = feed(input, extract, signal);
    let entries = 0;
    let sliceStarted = performance.now();
    for await (const entry of extract) {
      if (signal.aborted) throw aborted('restore');
      entries++;
      await run.entry(entry.header, entry as unknown as Readable);
      entry.resume();
      if (performance.now() - sliceStarted > YIELD_AFTER_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStarted = performance.now();
      }
    }
    const inputFailure = await feeding;
    if (inputFailure) throw inputFailure;
    if (entries === 0) throw new AdapterError(DIRECTORY_ORIGIN, 'CONFIG', 'the backup holds no tar entries: nothing to restore');
    await options.beforeCommit?.();
    await run.finish();
  } catch (error) {
    abandonInput(input, error);
    await feeding;
    await run.abandon();
    if (error instanceof AdapterError) throw error;
    if (signal.aborted || errnoOf(error) === 'ABORT_ERR') throw aborted('restore');
    throw toAdapterError(error, `restore into ${where} failed`);
  }
  return { warnings: run.warnings.list() };
}

export { restoreDestination } from './restore-destination.js';
