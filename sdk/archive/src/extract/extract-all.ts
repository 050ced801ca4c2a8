import type { Readable } from 'node:stream';
import { ArchiveFormatError, ArchiveIntegrityError } from '../errors.js';
import { decodeIndexFile } from '../format/index-file.js';
import { manifestSchema, type ArchiveIndex, type ArchiveManifest } from '../format/index-schema.js';
import { ByteReader } from '../reader/byte-reader.js';
import { collectBytes } from '../reader/collect-bytes.js';
import { readMembers, type ArchiveMember } from '../reader/members.js';
import type { UnsealIndex } from '../reader/read-index.js';
import { ExtractionTarget, type ExtractOptions, type ExtractSummary, type RestorableEntry } from './extraction-target.js';

/** Options of {@link extractAll}. */
export interface ExtractAllOptions extends ExtractOptions {
  /** Needed to check content against a sealed index; without it a sealed archive extracts unchecked by the index. */
  unsealIndex?: UnsealIndex;
}

/** What {@link extractAll} restored and read. */
export interface ExtractAllResult extends ExtractSummary {
  manifest?: ArchiveManifest;
  index?: ArchiveIndex;
}

// Tar type flags of members this format never writes and no restore creates: character and block devices, FIFOs.
const SPECIAL_TYPES: Readonly<Record<string, 'device' | 'fifo'>> = { '3': 'device', '4': 'device', '6': 'fifo' };

const MAX_FORMAT_MEMBER = 512 * 1024 * 1024;

/**
 * Extracts a whole archive from a stream (no range reads): files, dumps (under `.holdfast/databases/`), directories
 * with their modes and mtimes, symlinks and hard links. At the end every extracted file is checked against the
 * index's SHA-256; entries that live in earlier archives of a chain are not in this stream and are not restored.
 * Members the containment rule refuses (ExtractionTarget) are skipped and named in `warnings`.
 */
export async function extractAll(source: Readable, targetDir: string, options: ExtractAllOptions = {}): Promise<ExtractAllResult> {
  const target = new ExtractionTarget(targetDir, options);
  const reader = new ByteReader(source);
  let manifest: ArchiveManifest | undefined;
  let indexBytes: Buffer | undefined;
  for await (const member of readMembers(reader)) {
    switch (member.kind) {
      case 'format':
        if (member.role === 'manifest') manifest = parseManifest(await collect(member));
        if (member.role === 'index') indexBytes = await collect(member);
        break;
      case 'directory':
        await target.directory(restorable(member));
        break;
      case 'symlink':
        target.symlink(restorable(member));
        break;
      case 'hardlink':
        target.hardlink(restorable(member));
        break;
      default: {
        const special = SPECIAL_TYPES[member.header.typeFlag];
        // A device node or FIFO in the tar is refused by name, never written as a regular file of its (empty) body.
        if (special) target.special(restorable(member), special);
        else await target.file(restorable(member), member.data());
      }
    }
  }
  const summary = await target.finish();
  const index = indexBytes ? await decodeStoredIndex(indexBytes, manifest, options.unsealIndex) : undefined;
  if (index) verifyAgainstIndex(index, summary, (path) => target.isRefused(path));
  return { ...summary, ...(manifest ? { manifest } : {}), ...(index ? { index } : {}) };
}

function restorable(member: ArchiveMember): RestorableEntry {
  const { header } = member;
  return {
    path: member.path,
    kind: member.kind === 'format' ? 'file' : member.kind,
    mode: header.mode,
    uid: header.uid,
    gid: header.gid,
    mtime: header.mtime,
    ...(member.target !== undefined ? { target: member.target } : {}),
  };
}

function parseManifest(bytes: Buffer): ArchiveManifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ArchiveFormatError('the manifest is not JSON');
  }
  const result = manifestSchema.safeParse(parsed);
  if (!result.success) throw new ArchiveFormatError(`the manifest does not match format version 1: ${result.error.issues[0]?.message}`);
  return result.data;
}

function collect(member: ArchiveMember): Promise<Buffer> {
  return collectBytes(member.data(), MAX_FORMAT_MEMBER, () => new ArchiveIntegrityError(`${member.path} is larger than ${MAX_FORMAT_MEMBER} bytes`));
}

async function decodeStoredIndex(stored: Buffer, manifest: ArchiveManifest | undefined, unseal?: UnsealIndex) {
  if (!manifest?.isIndexSealed) return decodeIndexFile(stored);
  return unseal ? decodeIndexFile(Buffer.from(await unseal(stored))) : undefined;
}

function verifyAgainstIndex(index: ArchiveIndex, summary: ExtractSummary, isRefused: (path: string) => boolean): void {
  for (const entry of index.entries) {
    if (entry.archive !== undefined || (entry.kind !== 'file' && entry.kind !== 'database-dump') || isRefused(entry.path)) continue;
    const actual = summary.sha256.get(entry.path);
    if (actual !== entry.sha256) {
      throw new ArchiveIntegrityError(`"${entry.path}" was ${actual ? 'extracted with different content than' : 'not found but is in'} the index`);
    }
  }
}
