import type { EncryptionSidecarInfo } from '../codec/index.js';
import type { AgeSidecarInfo } from '../codec/age/index.js';

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
  encryption?: ((EncryptionSidecarInfo | AgeSidecarInfo) & { profileId: string }) | null;
  destinations?: DestinationOutcome[];
  warnings?: string[];
  /** `locked`: pruned by the policy but kept because the store still holds them under an object lock. */
  retention?: Array<{ configId: string; deleted: string[]; kept: number; errors: string[]; locked?: string[] }>;
  /** Display label for executions without a job (restores). */
  label?: string;
  /** Why a run ended Cancelled: `cancelled`, `stuck`, `shutdown`. */
  cancelReason?: string;
  /** Post-upload verification per destination (backups). */
  verification?: Array<{ configId: string; name: string; status: 'verified' | 'mismatch' | 'skipped'; method?: string; verifiedAt?: string; problem?: string }>;
  /** Seekable runs: the chain position chosen and why (a full backup says why it is full). */
  archive?: { chain: { id: string; sequence: number; baseArchives: string[] } | null; reason: string };
  /** Figures of the dumped data, recorded at backup time for test restores. */
  figures?: import('../run/sidecar.js').BackupFigures;
  /** Integrity check and verification runs: what was covered and found. */
  integrity?: IntegrityMetadata;
  /** Test restores: what was restored where, the checks and the measured duration. */
  testRestore?: TestRestoreMetadata;
  /** Physical base backups: the base's place in the change log (as in the sidecar's `pointInTime`). */
  pointInTime?: import('../pitr/base-backup-record.js').PointInTimeSidecar;
  /** Point-in-time restores: what was asked and the last commit the restored copy holds (`recoveredTo`, ISO 8601). */
  pointRestore?: {
    jobId: string;
    target: import('../pitr/restore/point-restore-request.js').PointRestoreBody['target'];
    /** PostgreSQL: the folder the data directory was built in. */
    targetPath?: string;
    /** MySQL/MariaDB: the database of the base restored (`name`) and the new database it was built in (`into`). */
    database?: { name: string; into: string };
    /** MySQL/MariaDB: the other server the new database was built on (absent: the job's own source's server). */
    targetSource?: { id: string; name: string };
    baseExecutionId: string;
    recoveredTo: string | null;
    served?: { port: number; dataDir: string };
  };
}

/** Record of an integrity check or verification run. */
export interface IntegrityMetadata {
  scope: string;
  checked: number;
  bytes: number;
  byteBudget?: number | null;
  /** The first 500 problems (every one is in the log). */
  problems: Array<{ file: string; destinationId: string; destination: string; problem: string }>;
  problemCount?: number;
  /** Where a budgeted run stopped (`<destination id>\u0000<key>`); the next budgeted run of the same scope continues after it. */
  cursor?: string | null;
  /** True when the run reached the end of its scope. */
  complete: boolean;
}

/** Record of a test restore. */
export interface TestRestoreMetadata {
  file: string;
  storageId: string;
  target: string;
  /** Restore plus checks, in milliseconds: the job's measured restore time (RTO). */
  durationMs?: number;
  checks: Array<{ name: string; ok: boolean; detail: string }>;
  scratchRemoved?: boolean;
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
