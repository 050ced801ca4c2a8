import type { ChainInfo, Compression } from '@holdfast/archive';
import type { ReadSidecar } from '../run/sidecar.js';

/** The `archive` field of a seekable backup's `.meta.json` (docs/formats/sidecar.md). */
export interface ArchiveSidecarInfo {
  format: 'holdfast-archive';
  version: 1;
  /** Compression of each member (the archive stream itself is stored as is, then encrypted when the job encrypts). */
  memberCompression: Compression;
  chain: ChainInfo | null;
  /** Creation time of the chain's full backup, so the planner can start a new chain after `fullEveryDays`. */
  chainStartedAt?: string;
  /** Entries of the snapshot the index describes, and what this run stored or referenced. */
  entries: number;
  summary?: Readonly<Record<string, number>>;
}

/** The archive info of a sidecar, or undefined for a plain backup. */
export function archiveInfoOf(sidecar: ReadSidecar | null): ArchiveSidecarInfo | undefined {
  const info = (sidecar as { archive?: unknown } | null)?.archive;
  if (!info || typeof info !== 'object') return undefined;
  const candidate = info as Partial<ArchiveSidecarInfo>;
  return candidate.format === 'holdfast-archive' ? (candidate as ArchiveSidecarInfo) : undefined;
}

/** The `{chain}` naming token: empty for a standalone archive, `full` for a chain's first run, `inc-N` after it. */
export function chainToken(chain: ChainInfo | null): string {
  if (!chain) return '';
  return chain.sequence === 0 ? 'full' : `inc-${chain.sequence}`;
}
