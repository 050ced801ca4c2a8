import { randomBytes } from 'node:crypto';
import { AdapterError, type AdapterErrorOrigin } from '@holdfast/kernel/adapter';

/** One target of a {@link StagedDatabaseRestore}: restored into `staging`, swapped into `target` on success. */
export interface StagedTarget {
  target: string;
  staging: string;
}

/**
 * The engine-neutral order of an all-or-nothing database restore (docs/security.md, "Atomic database restores"): each
 * target is restored into a staging copy registered in {@link staged}; when the whole restore went in, {@link commit}
 * swaps every staging copy in; when it failed, {@link discardAfter} drops the staging copies made so far and answers the
 * error to throw. The engine's source supplies the staging, the swap and the discard.
 */
export abstract class StagedDatabaseRestore<Entry extends StagedTarget = StagedTarget> {
  /** Marks this restore's work names (8 hex digits). */
  protected readonly id = randomBytes(4).toString('hex');
  /** The targets staged so far, in order. */
  protected readonly staged: Entry[] = [];

  /**
   * @param overwrite the restore's `RestoreOptions.overwrite`: `false` makes {@link refuseReplacing} refuse a target
   *   that exists; `true` or absent lets the swap replace it.
   */
  constructor(
    protected readonly origin: AdapterErrorOrigin,
    protected readonly overwrite?: boolean,
  ) {}

  /** Runs `work` (which stages each database), then swaps on success or discards on failure. */
  async around<T>(work: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await work();
    } catch (error) {
      throw await this.discardAfter(error);
    }
    await this.commit();
    return result;
  }

  /** Refuses a second database of the backup restored into a `target` already staged (CONFIG). */
  protected refuseSecondInto(target: string): void {
    if (this.staged.some((entry) => entry.target === target)) {
      throw new AdapterError(this.origin, 'CONFIG', `two databases of the backup would both be restored into "${target}": map them to different databases`);
    }
  }

  /**
   * With `overwrite: false`, refuses (CONFIG) to replace `existing`, the targets that exist now: a source calls it when
   * it learns a target exists (staging it, and again right before the swap, from what the swap itself reads), so a
   * database created after the engine's check is not replaced. The caller discards the staging (around's catch does).
   */
  protected refuseReplacing(existing: readonly string[]): void {
    if (this.overwrite !== false || existing.length === 0) return;
    const one = existing.length === 1;
    const names = existing.map((name) => `"${name}"`).join(', ');
    throw new AdapterError(
      this.origin,
      'CONFIG',
      `the ${one ? 'database' : 'databases'} ${names} ${one ? 'exists' : 'exist'} now and the restore request did not allow replacing ${one ? 'it' : 'them'}: nothing was replaced. Send "overwrite": true to replace ${one ? 'it' : 'them'}, or restore into a new database`,
    );
  }

  /** Swaps every staged target in (or throws what {@link discardAfter} answers, leaving the targets as they were). */
  protected abstract commit(): Promise<void>;

  /** Drops the staging copies made so far; answers the error to throw for `error`. */
  protected abstract discardAfter(error: unknown): Promise<unknown>;
}
