import { Readable } from 'node:stream';
import { readSidecarObject, SIDECAR_EXTENSION, type StorageAdapter } from '@holdfast/kernel';
import { z } from 'zod';
import type { ArchiveSidecarInfo } from '../archive/archive-sidecar.js';
import type { CompressionSidecarInfo, EncryptionSidecarInfo } from '../codec/index.js';
import type { AgeSidecarInfo } from '../codec/age/index.js';
import type { PointInTimeSidecar } from '../pitr/base-backup-record.js';

export { isSidecarKey, SIDECAR_EXTENSION } from '@holdfast/kernel';
/** Version of the sidecar layout (docs/formats/sidecar.md). */
export const SIDECAR_FORMAT_VERSION = 1;

/** The `<file>.meta.json` of one backup (docs/formats/sidecar.md). */
export interface BackupSidecar {
  formatVersion: number;
  createdAt: string;
  sha256: string;
  md5: string;
  size: number;
  locked: boolean;
  trigger: { type: string; actor?: string };
  compression: CompressionSidecarInfo;
  /** HFENC header fields, or (public-key profiles, issue 45) `format: 'age'` and the recipient. */
  encryption: ((EncryptionSidecarInfo | AgeSidecarInfo) & { profileId: string }) | null;
  source: { kind: 'source'; adapterId: string; configId: string; engineVersion: string | null };
  databases: string[];
  jobId: string | null;
  jobName: string | null;
  executionId: string;
  /** Post-upload verification of this destination's copy. */
  verification?: { status: 'verified' | 'mismatch' | 'skipped'; method?: string; verifiedAt?: string };
  /** Figures of the dumped data (tables and row counts, files and bytes) that test restores compare against. */
  figures?: BackupFigures;
  /** Seekable archives: format, member compression and chain position (docs/formats/sidecar.md). */
  archive?: ArchiveSidecarInfo;
  /** Physical base backups (point-in-time recovery): where the backup starts and ends in the change log. */
  pointInTime?: PointInTimeSidecar;
}

/** What a backup contained, recorded at backup time for test restores. */
export interface BackupFigures {
  /** Per database: table (`schema.table` on PostgreSQL) -> row count; Redis: index -> `{ keys, expires }`. */
  databases?: Record<string, Record<string, number>>;
  /** Directory archives: regular files and their total bytes. */
  files?: { count: number; bytes: number };
}

const sidecarSchema = z.looseObject({
  formatVersion: z.number().int().min(1),
  createdAt: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  md5: z.string().optional(),
  size: z.number().int().min(0).optional(),
  locked: z.boolean().default(false),
  compression: z.looseObject({ codec: z.string() }).optional(),
  encryption: z.looseObject({ profileId: z.string().optional(), keyFingerprint: z.string() }).nullable().optional(),
  source: z.looseObject({ adapterId: z.string(), configId: z.string().optional() }).optional(),
  jobId: z.string().nullable().optional(),
  databases: z.array(z.string()).optional(),
  figures: z
    .looseObject({
      databases: z.record(z.string(), z.record(z.string(), z.number())).optional(),
      files: z.object({ count: z.number(), bytes: z.number() }).optional(),
    })
    .optional(),
});

/** A parsed sidecar as read back; readers accept newer additive fields. */
export type ReadSidecar = z.output<typeof sidecarSchema>;

/** Writes the sidecar of `key` (an atomic put like any object). */
export async function writeSidecar(storage: StorageAdapter, key: string, sidecar: BackupSidecar, signal?: AbortSignal): Promise<void> {
  const text = `${JSON.stringify(sidecar, null, 2)}\n`;
  await storage.put(`${key}${SIDECAR_EXTENSION}`, Readable.from([Buffer.from(text, 'utf8')]), { signal, size: Buffer.byteLength(text) });
}

/**
 * Reads the sidecar of `key`; `null` when there is none (`NOT_FOUND`). Throws for a sidecar that exists but is not
 * valid, naming the file, so retention and restores never act on a misread.
 */
export async function readSidecar(storage: StorageAdapter, key: string, signal?: AbortSignal): Promise<ReadSidecar | null> {
  const raw = await readSidecarObject(storage, key, signal);
  if (!raw) return null;
  const parsed = sidecarSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(`sidecar of "${key}" is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}
