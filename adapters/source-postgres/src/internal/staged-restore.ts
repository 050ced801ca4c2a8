import { setTimeout as sleep } from 'node:timers/promises';
import { AdapterError, isAdapterError, StagedDatabaseRestore, type StagedTarget } from '@holdfast/sdk';
import { adminQuery, type AdminTarget } from './admin-sql.js';
import { ORIGIN, quoteIdentifier } from './connection.js';
import { majorVersion } from './dump-header.js';
import { quoteLiteral } from './remote-query.js';
import { copyDatabaseProperties, describeDatabase, type DatabaseFacts } from './database-properties.js';
import type { TargetVersion } from './version-guard.js';

/** Marks the databases a restore works in; `listDatabases` leaves them out, so no backup of "all" picks one up. */
const STAGING_MARK = '__holdfast_staging_';
const ASIDE_MARK = '__holdfast_old_';
/** PostgreSQL keeps 63 bytes of a name and silently cuts the rest: work names are cut by us, on a character boundary. */
const NAME_BYTES = 63;
/** Sessions on a database being swapped out are ended, then the rename is tried again this often. */
const SWAP_ATTEMPTS = 3;

/** True for a staging or set-aside database of a restore (in progress, or left by a crash). */
export function isRestoreWorkDatabase(name: string): boolean {
  return /__holdfast_(staging|old)_[0-9a-f]{8}$/.test(name);
}

/** `<database><mark><id>`, the database part shortened so the whole fits in 63 bytes. */
export function workName(database: string, mark: string, id: string): string {
  const suffix = `${mark}${id}`;
  let prefix = database;
  while (Buffer.byteLength(prefix, 'utf8') + suffix.length > NAME_BYTES) prefix = [...prefix].slice(0, -1).join('');
  return `${prefix}${suffix}`;
}

/** How pg_restore writes one database of the backup. */
export interface RestoreInto {
  /** The database pg_restore connects to. */
  database: string;
  /** pg_restore options this way of restoring needs. */
  args: string[];
}

/** A target restored into a staging database, swapped in by {@link StagedRestore.commit}. */
interface Staged extends StagedTarget {
  /** The existing target (renamed aside at the swap and dropped after it); undefined for a new database. */
  existing: DatabaseFacts | undefined;
}

/** What a staged restore needs of the restore context. */
export interface StagingContext extends AdminTarget {
  targetVersion: TargetVersion;
  warnings: string[];
  /** `RestoreOptions.overwrite`: false refuses a target that exists (when staging it, and again right before the swap). */
  overwrite?: boolean;
}

/**
 * Makes a restore all or nothing (docs/security.md, "Atomic database restores"). Each target database is restored
 * into a fresh staging database `<name>__holdfast_staging_<id>`; when every database of the backup went in, one
 * transaction renames each existing target aside and its staging database to the target name, and the old ones are
 * dropped. A failure before that drops the staging databases and leaves every target as it was. With restoreClean off
 * a restore merges into an existing target, which a swap would lose: that goes in place, in one transaction.
 */
export class StagedRestore extends StagedDatabaseRestore<Staged> {
  constructor(private readonly context: StagingContext) {
    super(ORIGIN, context.overwrite);
  }

  /** Creates the staging database of `target` (or chooses the in-place merge) and says where pg_restore writes. */
  async prepare(target: string): Promise<RestoreInto> {
    const { config } = this.context;
    this.refuseSecondInto(target);
    const existing = await describeDatabase(this.context, target);
    if (existing) this.refuseReplacing([target]);
    if (!existing && !config.restoreCreateDatabase) {
      throw new AdapterError(ORIGIN, 'NOT_FOUND', `the target database "${target}" does not exist and restoreCreateDatabase is off; create it first or map the restore to an existing database`);
    }
    if (existing && !config.restoreClean) return { database: target, args: ['--single-transaction'] };
    if (existing && !existing.canReplace) {
      throw new AdapterError(
        ORIGIN,
        'AUTH',
        `the role "${config.user}" cannot replace the database "${target}": an atomic restore renames it, which needs ownership of it (membership in its owner role) and CREATEDB. Nothing was written.`,
      );
    }
    const staging = workName(target, STAGING_MARK, this.id);
    await adminQuery(this.context, config.maintenanceDatabase, `CREATE DATABASE ${quoteIdentifier(staging)}${existing?.createOptions ?? ''}`);
    this.staged.push({ target, staging, existing });
    if (existing) this.context.warnings.push(...(await copyDatabaseProperties(this.context, existing, staging)));
    return { database: staging, args: [] };
  }

  /** Swaps every staging database in, in one transaction, then drops the databases it replaced. */
  protected async commit(): Promise<void> {
    if (this.staged.length === 0) return;
    await this.refuseTargetsThatAppeared();
    const replaced = this.staged.filter((entry) => entry.existing).map((entry) => entry.target);
    const renames = this.staged.flatMap(({ target, staging, existing }) => [
      ...(existing ? [`ALTER DATABASE ${quoteIdentifier(target)} RENAME TO ${quoteIdentifier(workName(target, ASIDE_MARK, this.id))}`] : []),
      `ALTER DATABASE ${quoteIdentifier(staging)} RENAME TO ${quoteIdentifier(target)}`,
    ]);
    const admin = this.adminDatabase();
    for (let attempt = 1; ; attempt += 1) {
      try {
        // A rename needs every other session of both databases gone. Replacing a database ends its sessions, as the
        // in-place restore's DROPs would have blocked or broken them; the rename itself waits up to 5 s for them.
        if (replaced.length > 0) await adminQuery(this.context, admin, terminateSessions(replaced));
        await adminQuery(this.context, admin, `BEGIN; ${renames.join('; ')}; COMMIT`);
        break;
      } catch (error) {
        const isBusy = /being accessed by other users/i.test((error as Error).message);
        if (isBusy && attempt < SWAP_ATTEMPTS) {
          await sleep(500);
          continue;
        }
        const why = isBusy
          ? `other sessions kept connecting to ${replaced.map((name) => `"${name}"`).join(', ')} and could not be ended (the role needs pg_signal_backend or to be their role)`
          : (error as Error).message;
        throw await this.discardAfter(new AdapterError(ORIGIN, isAdapterError(error) ? error.code : 'TRANSIENT', `the restored databases could not be swapped in: ${why}. The old databases are untouched.`, { cause: error }));
      }
    }
    const force = (majorVersion(await this.context.targetVersion()) ?? 0) >= 13 ? ' WITH (FORCE)' : '';
    for (const { target } of this.staged.filter((entry) => entry.existing)) {
      const aside = workName(target, ASIDE_MARK, this.id);
      await adminQuery(this.context, admin, `DROP DATABASE IF EXISTS ${quoteIdentifier(aside)}${force}`).catch((error: unknown) => {
        this.context.warnings.push(`"${target}" was replaced, but its old copy "${aside}" could not be dropped (drop it by hand): ${(error as Error).message}`);
      });
    }
  }

  /**
   * With `overwrite: false`, right before the swap: a target that did not exist when it was staged but does now (it
   * was created meanwhile) is refused and the staging dropped. The rename would fail on it anyway; this says why.
   */
  private async refuseTargetsThatAppeared(): Promise<void> {
    if (this.overwrite !== false) return;
    const fresh = this.staged.filter((entry) => !entry.existing).map((entry) => entry.target);
    if (fresh.length === 0) return;
    try {
      const rows = await adminQuery(this.context, this.adminDatabase(), `SELECT datname FROM pg_database WHERE datname IN (${fresh.map(quoteLiteral).join(', ')})`);
      this.refuseReplacing(fresh.filter((name) => rows.some((row) => row[0] === name)));
    } catch (error) {
      throw await this.discardAfter(error);
    }
  }

  /** Drops the staging databases made so far; answers `error`, with a note when one could not be dropped. */
  protected async discardAfter(error: unknown): Promise<unknown> {
    const force = (majorVersion(await this.context.targetVersion().catch(() => '0')) ?? 0) >= 13 ? ' WITH (FORCE)' : '';
    const left: string[] = [];
    for (const { staging } of this.staged.splice(0)) {
      await adminQuery(this.context, this.adminDatabase(), `DROP DATABASE IF EXISTS ${quoteIdentifier(staging)}${force}`).catch(() => left.push(staging));
    }
    if (left.length === 0 || !(error instanceof Error)) return error;
    const code = isAdapterError(error) ? error.code : 'TRANSIENT';
    const message = error.message.replace(/^\[source-postgres\] /, '');
    return new AdapterError(ORIGIN, code, `${message} (the staging database${left.length > 1 ? 's' : ''} ${left.map((name) => `"${name}"`).join(', ')} could not be dropped: drop by hand)`, { cause: error });
  }

  /** A database to run the swap from: a session there would block renaming it, so it is none of the renamed ones. */
  private adminDatabase(): string {
    const busy = new Set(this.staged.map((entry) => entry.target));
    return [this.context.config.maintenanceDatabase, 'postgres', 'template1'].find((name) => !busy.has(name))!;
  }
}

/** Ends every other session on `databases`. */
function terminateSessions(databases: string[]): string {
  return `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname IN (${databases.map(quoteLiteral).join(', ')}) AND pid <> pg_backend_pid()`;
}
