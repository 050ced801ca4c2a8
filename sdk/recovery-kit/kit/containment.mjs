// The containment rule of Holdfast restores, for the recovery kit. The kit is stand-alone (Node's own modules and the
// files next to it), so this is a copy of RestoreContainment in @holdfast/archive (sdk/archive/src/extract/
// containment.ts): change both together. The rule decides, member by member in index order, what may be written
// below the output folder, against the symlinks the archive already placed (they are created last):
// - a member below a symlink of the archive is refused (nothing is written through a link);
// - a hard link whose target lies below a symlink of the archive is refused;
// - setuid, setgid and sticky bits are dropped (with a note) unless keepSpecialModes;
// - at the end every symlink is resolved through all the others; one that is absolute, steps above the output folder
//   at any point, or loops is refused.

const SPECIAL_BITS = [
  [0o4000, 'setuid'],
  [0o2000, 'setgid'],
  [0o1000, 'sticky'],
];
const MAX_LINK_HOPS = 40;

export class Containment {
  constructor({ keepSpecialModes = false } = {}) {
    this.keepSpecialModes = keepSpecialModes;
    this.symlinks = new Map();
    this.directories = new Set();
  }

  /**
   * `member` is { path (safe, normalised), kind, mode, target, payload }. Returns { refused } or
   * { path, mode, note?, linkTarget?, becameSymlink? }.
   */
  admit(member) {
    const { path, kind } = member;
    const through = this.symlinkAbove(path);
    if (through !== undefined) return { refused: `it lies below "${through}", a symlink of this archive` };
    const { mode, note } = this.modeFor(member.mode ?? 0o644, kind);
    if (kind === 'symlink') {
      if (!member.target || member.target.includes('\0')) return { refused: 'its link target is empty or holds NUL' };
      if (this.directories.has(path)) return { refused: 'a folder of this archive is already at that path' };
      this.symlinks.set(path, { target: member.target, payload: member.payload });
      return { path, mode };
    }
    if (kind === 'hardlink') {
      const linkedThrough = this.symlinkAbove(member.target);
      if (linkedThrough !== undefined) return { refused: `its link target "${member.target}" lies below "${linkedThrough}", a symlink of this archive` };
      this.symlinks.delete(path);
      this.addParents(path);
      return { path, mode, linkTarget: member.target };
    }
    this.symlinks.delete(path);
    this.addParents(path);
    if (kind === 'directory') this.directories.add(path);
    return note ? { path, mode, note } : { path, mode };
  }

  modeFor(archived, kind) {
    const mode = archived & 0o7777;
    if (this.keepSpecialModes || (mode & 0o7000) === 0 || kind === 'symlink') return { mode };
    const dropped = SPECIAL_BITS.filter(([bit]) => (mode & bit) !== 0).map(([, name]) => name);
    return { mode: mode & 0o777, note: `restored without its ${dropped.join(' and ')} bit${dropped.length > 1 ? 's' : ''}` };
  }

  symlinkPaths() {
    return [...this.symlinks.keys()];
  }

  withdraw(path) {
    this.symlinks.delete(path);
  }

  /** Returns { accepted: [{ path, target, payload }], refused: [{ path, target, payload, reason }] }. */
  settle() {
    const refused = [];
    for (let isChanged = true; isChanged; ) {
      const escaping = [];
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

  addParents(path) {
    for (let slash = path.lastIndexOf('/'); slash !== -1; slash = path.lastIndexOf('/', slash - 1)) {
      const parent = path.slice(0, slash);
      if (this.directories.has(parent)) return;
      this.directories.add(parent);
    }
  }

  symlinkAbove(path) {
    if (this.symlinks.size === 0) return undefined;
    for (let slash = path.indexOf('/'); slash !== -1; slash = path.indexOf('/', slash + 1)) {
      const ancestor = path.slice(0, slash);
      if (this.symlinks.has(ancestor)) return ancestor;
    }
    return undefined;
  }

  escapeOf(path, target) {
    if (target.startsWith('/')) return `its target "${target}" is absolute, outside the output folder`;
    const resolved = path.split('/').slice(0, -1);
    let pending = target.split('/');
    let hops = 0;
    while (pending.length > 0) {
      const [segment, ...rest] = pending;
      pending = rest;
      if (segment === '' || segment === '.') continue;
      if (segment === '..') {
        if (resolved.length === 0) return `its target "${target}" resolves outside the output folder`;
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
