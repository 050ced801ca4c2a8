// The containment rule every restore path applies (docs/security.md, "Restores: containment"). Pure bookkeeping on
// archive paths, no file-system access: the extractor (this package), the directory source's tar restore and the
// volume source's tar rewriting all decide with it. The recovery kit is stand-alone .mjs and carries its own copy
// (sdk/recovery-kit/kit/containment.mjs); change both together.

/** What a member is, as far as the rule cares. Tar types without a counterpart here are `other`. */
export type ContainedKind = 'file' | 'database-dump' | 'directory' | 'symlink' | 'hardlink' | 'device' | 'fifo' | 'other';

/** A member offered to {@link RestoreContainment.admit}, in archive order. */
export interface ContainedMember<T> {
  /** The member's name as the archive gives it (checked here: relative, no `..`, no NUL). */
  path: string;
  kind: ContainedKind;
  /** Permission bits as archived (0..0o7777). */
  mode?: number;
  /** Symlink target, or the archive path a hard link points at. */
  target?: string;
  /** Carried with a symlink until {@link RestoreContainment.settle} hands it back (the caller's metadata). */
  payload?: T;
}

/**
 * The rule's answer for one member. Admitted members come back with their normalised path and the mode to apply;
 * `note` says what was dropped (setuid/setgid/sticky bits) and belongs in the run's warnings. A symlink is only
 * recorded: the caller creates it after {@link RestoreContainment.settle}. A hard link that points at a symlink of the
 * archive is recorded as a second symlink (`becameSymlink`).
 */
export type ContainmentVerdict =
  | { refused: string }
  | { path: string; mode: number; note?: string; linkTarget?: string; becameSymlink?: boolean };

/** A symlink the rule let through, with the caller's payload. */
export interface SettledSymlink<T> {
  path: string;
  target: string;
  payload: T | undefined;
}

/** Options of {@link RestoreContainment}. */
export interface ContainmentOptions {
  /**
   * Keep setuid, setgid and sticky bits. Callers set it only when they restore owners too: a setuid file owned by
   * whoever runs the restore (root) is a privilege the backup never had. @default false
   */
  keepSpecialModes?: boolean;
}

const SPECIAL_BITS: readonly [number, string][] = [
  [0o4000, 'setuid'],
  [0o2000, 'setgid'],
  [0o1000, 'sticky'],
];
const SPECIAL_FILES = { device: 'device nodes', fifo: 'FIFOs', other: 'special files of this type' } as const;
// Linux gives up after 40 links in one resolution; a chain longer than that resolves nowhere, so it is refused too.
const MAX_LINK_HOPS = 40;

/**
 * Decides, member by member, what a restore may write below its target, against the links the archive already
 * placed (not yet on disk: callers create symlinks last, after {@link settle}):
 * - a name that is empty, absolute, holds NUL or a `..` segment is refused;
 * - a member below a symlink of the archive is refused (nothing is written through a link, even one that stays inside);
 * - a hard link whose target lies below a symlink, or is unsafe, is refused; the caller still checks that the target
 *   is a file this restore wrote;
 * - devices, FIFOs and other special files are refused;
 * - setuid, setgid and sticky bits are dropped (with a note) unless `keepSpecialModes`;
 * - a symlink is refused at {@link settle} when its target, resolved through every other symlink the archive places,
 *   is absolute, steps above the target at any point, or loops.
 */
export class RestoreContainment<T = undefined> {
  private readonly symlinks = new Map<string, { target: string; payload: T | undefined }>();
  /** Folders the restore creates: listed ones and the parents of every admitted member. */
  private readonly directories = new Set<string>();
  private readonly keepSpecialModes: boolean;

  constructor(options: ContainmentOptions = {}) {
    this.keepSpecialModes = options.keepSpecialModes ?? false;
  }

  /** Checks one member; a symlink (or a hard link to one) is recorded for {@link settle}. */
  admit(member: ContainedMember<T>): ContainmentVerdict {
    const checked = containedPath(member.path);
    if ('refused' in checked) return checked;
    const { path } = checked;
    if (member.kind === 'device' || member.kind === 'fifo' || member.kind === 'other') {
      return { refused: `${SPECIAL_FILES[member.kind]} are not restored` };
    }
    const through = this.symlinkAbove(path);
    if (through !== undefined) return { refused: `it lies below "${through}", a symlink of this archive` };
    const { mode, note } = this.modeFor(member.mode ?? 0o644, member.kind);
    switch (member.kind) {
      case 'symlink': {
        const target = member.target ?? '';
        if (target === '' || target.includes('\0')) return { refused: 'its link target is empty or holds NUL' };
        if (this.directories.has(path)) return { refused: 'a folder of this archive is already at that path' };
        this.symlinks.set(path, { target, payload: member.payload });
        return { path, mode };
      }
      case 'hardlink': {
        const linked = this.linkTarget(member.target ?? '');
        if ('refused' in linked) return linked;
        // A hard link to a symlink is a second symlink with the same target (what the link would resolve to anyway).
        if (linked.symlinkTarget !== undefined) {
          if (this.directories.has(path)) return { refused: 'a folder of this archive is already at that path' };
          this.symlinks.set(path, { target: linked.symlinkTarget, payload: member.payload });
          return { path, mode, linkTarget: linked.symlinkTarget, becameSymlink: true };
        }
        // The link shares its target's inode, mode included: the target's own admission dropped any special bits.
        this.symlinks.delete(path);
        this.addParents(path);
        return { path, mode, linkTarget: linked.path };
      }
      default:
        // A later member of another kind at a symlink's path replaces it (the last member of a path wins).
        this.symlinks.delete(path);
        this.addParents(path);
        if (member.kind === 'directory') this.directories.add(path);
        return { path, mode, ...(note ? { note } : {}) };
    }
  }

  /**
   * Resolves every recorded symlink through all the others and refuses those that do not stay inside; repeats until
   * nothing changes (a refused link is not created, which changes how the others resolve). Returns the links to
   * create, in the order they were recorded, and the refused ones with the reason.
   */
  settle(): { accepted: SettledSymlink<T>[]; refused: (SettledSymlink<T> & { reason: string })[] } {
    const refused: (SettledSymlink<T> & { reason: string })[] = [];
    for (let isChanged = true; isChanged; ) {
      // Every link is judged against the same set (the links as the archive would place them), so the answer does
      // not depend on archive order: `a/up3 -> up2/..` is refused with `a/up2`, not let through once up2 is gone.
      const escaping: (SettledSymlink<T> & { reason: string })[] = [];
      for (const [path, link] of this.symlinks) {
        const reason = this.escapeOf(path, link.target);
        if (reason !== undefined) escaping.push({ path, target: link.target, payload: link.payload, reason });
      }
      for (const link of escaping) this.symlinks.delete(link.path);
      refused.push(...escaping);
      isChanged = escaping.length > 0;
    }
    const accepted = [...this.symlinks].map(([path, link]) => ({ path, target: link.target, payload: link.payload }));
    return { accepted, refused };
  }

  /**
   * Checks where a hard link points (an archive path in this rule's coordinates): refused when unsafe or below a
   * symlink of the archive; `symlinkTarget` when it names a symlink of the archive. The caller still makes sure the
   * path holds a regular file this restore wrote before linking to it.
   */
  linkTarget(name: string): { path: string; symlinkTarget?: string } | { refused: string } {
    const linked = containedPath(name);
    if ('refused' in linked) return { refused: `its link target: ${linked.refused}` };
    const through = this.symlinkAbove(linked.path);
    if (through !== undefined) return { refused: `its link target "${linked.path}" lies below "${through}", a symlink of this archive` };
    const symlink = this.symlinks.get(linked.path);
    return symlink ? { path: linked.path, symlinkTarget: symlink.target } : { path: linked.path };
  }

  /** True when `path` (normalised) is a symlink recorded and not replaced since. */
  isSymlink(path: string): boolean {
    return this.symlinks.has(path);
  }

  /** The paths of the symlinks recorded so far (before {@link settle}, to check that nothing is in their way). */
  symlinkPaths(): string[] {
    return [...this.symlinks.keys()];
  }

  /**
   * Forgets a recorded symlink the caller cannot create (something the rule did not see is at its path, a folder
   * that was in the target before): {@link settle} then resolves the others through what is really there.
   */
  withdraw(path: string): void {
    this.symlinks.delete(path);
  }

  private addParents(path: string): void {
    for (let slash = path.lastIndexOf('/'); slash !== -1; slash = path.lastIndexOf('/', slash - 1)) {
      const parent = path.slice(0, slash);
      if (this.directories.has(parent)) return;
      this.directories.add(parent);
    }
  }

  /**
   * The permission bits to apply for an archived mode: special bits dropped (with a note for the warnings) unless
   * `keepSpecialModes`. {@link admit} applies it; a caller uses it directly for the target folder itself.
   */
  modeFor(archived: number, kind: ContainedKind): { mode: number; note?: string } {
    const mode = archived & 0o7777;
    if (this.keepSpecialModes || (mode & 0o7000) === 0 || kind === 'symlink') return { mode };
    const dropped = SPECIAL_BITS.filter(([bit]) => (mode & bit) !== 0).map(([, name]) => name);
    return { mode: mode & 0o777, note: `restored without its ${dropped.join(' and ')} bit${dropped.length > 1 ? 's' : ''}` };
  }

  // The nearest ancestor of `path` that is a recorded symlink, if any.
  private symlinkAbove(path: string): string | undefined {
    if (this.symlinks.size === 0) return undefined;
    for (let slash = path.indexOf('/'); slash !== -1; slash = path.indexOf('/', slash + 1)) {
      const ancestor = path.slice(0, slash);
      if (this.symlinks.has(ancestor)) return ancestor;
    }
    return undefined;
  }

  // Why the symlink at `path` leads outside, or undefined when it stays inside: its target is walked segment by
  // segment from the link's folder, each recorded symlink met on the way replaced by its own target.
  private escapeOf(path: string, target: string): string | undefined {
    if (target.startsWith('/')) return `its target "${target}" is absolute, outside the restore target`;
    const resolved = path.split('/').slice(0, -1);
    let pending = target.split('/');
    let hops = 0;
    while (pending.length > 0) {
      const [segment, ...rest] = pending as [string, ...string[]];
      pending = rest;
      if (segment === '' || segment === '.') continue;
      if (segment === '..') {
        if (resolved.length === 0) return `its target "${target}" resolves outside the restore target`;
        resolved.pop();
        continue;
      }
      resolved.push(segment);
      const link = this.symlinks.get(resolved.join('/'));
      if (!link) continue;
      hops += 1;
      if (hops > MAX_LINK_HOPS) return `its target "${target}" loops through symlinks`;
      if (link.target.startsWith('/')) return `its target "${target}" leads through "${resolved.join('/')}" to the absolute "${link.target}"`;
      resolved.pop();
      pending = [...link.target.split('/'), ...pending];
    }
    return undefined;
  }
}

/**
 * A member name as a normalised relative path ("/"-separated, no `.` segments, no trailing slash), or why it is
 * refused: empty, absolute, NUL or a `..` segment could name something outside the restore target.
 */
export function containedPath(name: string): { path: string } | { refused: string } {
  if (typeof name !== 'string' || name === '') return { refused: 'empty member name' };
  if (name.includes('\0')) return { refused: 'NUL in the member name' };
  if (name.startsWith('/')) return { refused: 'absolute member name' };
  const segments = name.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) return { refused: '".." in the member name' };
  if (segments.length === 0) return { refused: 'empty member name' };
  return { path: segments.join('/') };
}
