import type { EncryptionSidecarInfo } from '../codec/index.js';

/** Outcome of one destination of a run, kept in the execution's metadata. */
export interface DestinationOutcome {
  configId: string;
  name: string;
  adapterId: string;
  status: 'pending' | 'success' | 'failed';
  error?: string;
  /** Bytes the destination confirmed. */
  size?: number;
}

/**
 * The JSON held in `executions.metadata`. `stage` and `progress` are what the polling route shows; the rest is the
 * record of what the run produced. Every field is optional because it fills in stage by stage.
 */
export interface ExecutionMetadata {
  stage?: string;
  progress?: number;
  /** Plaintext bytes read from the source so far. */
  bytesProcessed?: number;
  /** Key written on every destination (set before the first byte is uploaded, so a crash can be cleaned up). */
  target?: { key: string; configIds: string[] };
  checksums?: { sha256: string; md5: string };
  compression?: { codec: string; level?: number; extension: string };
  encryption?: (EncryptionSidecarInfo & { profileId: string }) | null;
  destinations?: DestinationOutcome[];
  warnings?: string[];
  retention?: Array<{ configId: string; deleted: string[]; kept: number; errors: string[] }>;
  /** Display label for executions without a job (restores). */
  label?: string;
  /** Why a run ended Cancelled: `cancelled`, `stuck`, `shutdown`. */
  cancelReason?: string;
}

/** Parses a stored metadata column; a broken value reads as empty rather than failing a status query. */
export function parseMetadata(text: string | null | undefined): ExecutionMetadata {
  if (!text) return {};
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' ? (value as ExecutionMetadata) : {};
  } catch {
    return {};
  }
}
