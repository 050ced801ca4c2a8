import { randomBytes } from 'node:crypto';
import { UnauthorizedError } from '@holdfast/kernel';

/** SPEC "Limits": a download URL lives 5 minutes. */
export const TOKEN_LIFETIME_MS = 5 * 60_000;
/** SPEC "Limits": used tokens are removed 1 minute after use. */
export const USED_TOKEN_RETENTION_MS = 60_000;
/** SPEC "Limits": expired tokens are swept every 60 seconds. */
export const TOKEN_CLEANUP_INTERVAL_MS = 60_000;

/** What a download token grants: one file of one destination (or one file or dump inside it), decoded as asked. */
export interface DownloadGrant {
  storageId: string;
  file: string;
  decrypt: boolean;
  database?: string;
  /** One file of a seekable archive, by its archive path (excludes `database`). */
  path?: string;
}

/** A token's record (SPEC "Download token" state table). */
export interface DownloadTokenRecord extends DownloadGrant {
  token: string;
  expiresAt: number;
  usedAt: number | null;
  /** A download with this token is running; every other request is refused until it ends. */
  isInFlight: boolean;
}

/** Clock and timers, injectable so the state table is tested without waiting minutes. */
export interface TokenStoreClock {
  now(): number;
}

/**
 * Single-use download tokens, in process memory only (SPEC: lost on restart). A token is valid until it expires or
 * a download with it completes. At most one download runs per token: {@link claim} takes it synchronously, so two
 * requests arriving together cannot both pass; a read that fails before the last byte {@link release}s it, a
 * finished (or abandoned) one {@link consume}s it. Timers are unref'd so they never keep the process alive, and
 * {@link stop} clears them.
 */
export class DownloadTokenStore {
  private readonly records = new Map<string, DownloadTokenRecord>();
  private readonly removals = new Set<NodeJS.Timeout>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly clock: TokenStoreClock = { now: Date.now }) {}

  /** Starts the 60-second sweep of expired tokens. */
  start(): void {
    this.sweeper ??= setInterval(() => this.sweepExpired(), TOKEN_CLEANUP_INTERVAL_MS).unref();
  }

  stop(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const timer of this.removals) clearTimeout(timer);
    this.removals.clear();
  }

  /** Creates a token: 32 random bytes, base64url, expiring in 5 minutes, not used. */
  issue(grant: DownloadGrant): DownloadTokenRecord {
    const record: DownloadTokenRecord = { ...grant, token: randomBytes(32).toString('base64url'), expiresAt: this.clock.now() + TOKEN_LIFETIME_MS, usedAt: null, isInFlight: false };
    this.records.set(record.token, record);
    return record;
  }

  /** The record of a token that is known, unexpired and unused; otherwise 401 (the reason stays in logs). */
  validate(token: string): DownloadTokenRecord {
    const record = this.records.get(token);
    if (!record) throw new UnauthorizedError('download token unknown');
    if (record.usedAt !== null) throw new UnauthorizedError('download token already used');
    if (record.isInFlight) throw new UnauthorizedError('download token in use by another download');
    if (this.clock.now() >= record.expiresAt) {
      this.records.delete(token);
      throw new UnauthorizedError('download token expired');
    }
    return record;
  }

  /** Validates a token and marks it in flight in the same synchronous step; every later request gets 401. */
  claim(token: string): DownloadTokenRecord {
    const record = this.validate(token);
    record.isInFlight = true;
    return record;
  }

  /** Makes a claimed token usable again: its download failed before the last byte was read. */
  release(token: string): void {
    const record = this.records.get(token);
    if (record && record.usedAt === null) record.isInFlight = false;
  }

  /** Marks a token used once its download has handed over the last byte; it is removed a minute later. */
  consume(token: string): void {
    const record = this.records.get(token);
    if (!record || record.usedAt !== null) return;
    record.isInFlight = false;
    record.usedAt = this.clock.now();
    const timer = setTimeout(() => {
      this.removals.delete(timer);
      this.records.delete(token);
    }, USED_TOKEN_RETENTION_MS).unref();
    this.removals.add(timer);
  }

  /** Removes expired tokens (and used ones whose minute has passed, should a removal timer have been missed). */
  sweepExpired(): void {
    const now = this.clock.now();
    for (const [token, record] of this.records) {
      const isSpent = record.usedAt !== null && now - record.usedAt >= USED_TOKEN_RETENTION_MS;
      if (now >= record.expiresAt || isSpent) this.records.delete(token);
    }
  }

  /** Tokens currently held (diagnostics and tests). */
  get size(): number {
    return this.records.size;
  }

  /** Whether a token is still held in memory (tests). */
  has(token: string): boolean {
    return this.records.has(token);
  }
}
