import { createHash, randomBytes } from 'node:crypto';
import { defineMigration, type OrmDatabase } from '@holdfast/orm-port';
import { UnauthorizedError } from '@holdfast/kernel';
import type { Knex } from '@mikro-orm/knex';
import {
  TOKEN_CLEANUP_INTERVAL_MS,
  TOKEN_LIFETIME_MS,
  USED_TOKEN_RETENTION_MS,
  type DownloadGrant,
  type DownloadTokenRecord,
  type DownloadTokenStore,
  type TokenStoreClock,
} from './download-tokens.js';

/**
 * The download tokens as the storage browser uses them. Two implementations: process memory (libsql, one process,
 * as SPEC says) and a PostgreSQL table shared by every server process, so a link created through one process behind
 * a load balancer is redeemed through any other.
 */
export interface DownloadTokens {
  start(): void;
  stop(): void;
  issue(grant: DownloadGrant): Promise<DownloadTokenRecord>;
  /** Validates a token and marks it in flight in one atomic step; every other request gets 401 meanwhile. */
  claim(token: string): Promise<DownloadTokenRecord>;
  /** A claimed token's download failed before the last byte: usable again until it expires. */
  release(token: string): Promise<void>;
  /** A claimed token's download completed: refused from now on, removed a minute later. */
  consume(token: string): Promise<void>;
}

/** {@link DownloadTokens} over the in-memory {@link DownloadTokenStore} (its claim is synchronous, hence atomic). */
export class MemoryDownloadTokens implements DownloadTokens {
  constructor(readonly store: DownloadTokenStore) {}
  start(): void {
    this.store.start();
  }
  stop(): void {
    this.store.stop();
  }
  async issue(grant: DownloadGrant): Promise<DownloadTokenRecord> {
    return this.store.issue(grant);
  }
  async claim(token: string): Promise<DownloadTokenRecord> {
    return this.store.claim(token);
  }
  async release(token: string): Promise<void> {
    this.store.release(token);
  }
  async consume(token: string): Promise<void> {
    this.store.consume(token);
  }
}

const TABLE = 'download_tokens';

/**
 * `download_tokens`: the shared store of PostgreSQL installations. Only the SHA-256 of a token is stored, so
 * reading the table (a backup of the database, a read-only role) yields no working link. Used on PostgreSQL only;
 * created on both dialects so the schema is the same everywhere.
 */
export const createDownloadTokensTable = defineMigration('20261201-storage-browser-002-download-tokens', async (knex) => {
  await knex.schema.createTable(TABLE, (t) => {
    t.string('token_hash', 64).primary();
    t.string('storage_id', 36).notNullable();
    t.text('file').notNullable();
    t.boolean('decrypt').notNullable();
    t.string('database_name', 255).nullable();
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('used_at').nullable();
    t.boolean('in_flight').notNullable().defaultTo(false);
    t.index(['expires_at'], 'download_tokens_expires_at_index');
  });
});

/** `download_tokens.archive_path`: the archive path of a single-file download of a seekable archive (null otherwise). */
export const addDownloadTokenArchivePath = defineMigration('20261202-storage-browser-003-download-token-archive-path', async (knex) => {
  await knex.schema.alterTable(TABLE, (t) => {
    t.text('archive_path').nullable();
  });
});

interface TokenRow {
  token_hash: string;
  storage_id: string;
  file: string;
  decrypt: boolean;
  database_name: string | null;
  archive_path: string | null;
  expires_at: string | number;
  used_at: string | number | null;
  in_flight: boolean;
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Download tokens in the database, for several server processes. Same states and limits as the memory store
 * (5-minute lifetime, single use, a failed download leaves the token valid, used tokens removed after a minute,
 * expired ones swept every 60 s); the claim is one `UPDATE ... WHERE in_flight = false AND used_at IS NULL AND
 * expires_at > now`, so across processes exactly one request wins a token. Unlike the memory store, tokens survive
 * the restart of one process (the others may be serving them).
 */
export class DatabaseDownloadTokens implements DownloadTokens {
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly database: () => OrmDatabase,
    private readonly clock: TokenStoreClock = { now: Date.now },
  ) {}

  private knex(): Knex {
    return this.database().em().getKnex();
  }

  start(): void {
    this.sweeper ??= setInterval(() => void this.sweep().catch(() => undefined), TOKEN_CLEANUP_INTERVAL_MS).unref();
  }

  stop(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  async issue(grant: DownloadGrant): Promise<DownloadTokenRecord> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = this.clock.now() + TOKEN_LIFETIME_MS;
    await this.knex()(TABLE).insert({
      token_hash: hashOf(token),
      storage_id: grant.storageId,
      file: grant.file,
      decrypt: grant.decrypt,
      database_name: grant.database ?? null,
      archive_path: grant.path ?? null,
      expires_at: expiresAt,
      used_at: null,
      in_flight: false,
    });
    return { ...grant, token, expiresAt, usedAt: null, isInFlight: false };
  }

  async claim(token: string): Promise<DownloadTokenRecord> {
    const tokenHash = hashOf(token);
    const claimed: TokenRow[] = await this.knex()(TABLE)
      .where({ token_hash: tokenHash, in_flight: false })
      .whereNull('used_at')
      .andWhere('expires_at', '>', this.clock.now())
      .update({ in_flight: true })
      .returning('*');
    const row = claimed[0];
    if (row) {
      return {
        token,
        storageId: row.storage_id,
        file: row.file,
        decrypt: Boolean(row.decrypt),
        ...(row.database_name ? { database: row.database_name } : {}),
        ...(row.archive_path ? { path: row.archive_path } : {}),
        expiresAt: Number(row.expires_at),
        usedAt: null,
        isInFlight: true,
      };
    }
    throw new UnauthorizedError(await this.refusal(tokenHash));
  }

  /** Why a claim was refused (for the log; the client only sees 401). */
  private async refusal(tokenHash: string): Promise<string> {
    const row: TokenRow | undefined = await this.knex()(TABLE).select('*').where({ token_hash: tokenHash }).first();
    if (!row) return 'download token unknown';
    if (row.used_at !== null) return 'download token already used';
    if (row.in_flight) return 'download token in use by another download';
    return 'download token expired';
  }

  async release(token: string): Promise<void> {
    await this.knex()(TABLE).where({ token_hash: hashOf(token) }).whereNull('used_at').update({ in_flight: false });
  }

  async consume(token: string): Promise<void> {
    await this.knex()(TABLE).where({ token_hash: hashOf(token) }).whereNull('used_at').update({ in_flight: false, used_at: this.clock.now() });
  }

  /** Removes expired tokens and used ones older than a minute (every process sweeps; the deletes do not clash). */
  async sweep(): Promise<number> {
    const now = this.clock.now();
    return this.knex()(TABLE)
      .where('expires_at', '<=', now)
      .orWhere('used_at', '<=', now - USED_TOKEN_RETENTION_MS)
      .delete();
  }

  /** Whether a token is still stored (tests). */
  async has(token: string): Promise<boolean> {
    return (await this.knex()(TABLE).select('token_hash').where({ token_hash: hashOf(token) }).first()) !== undefined;
  }
}
